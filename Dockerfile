# The workshop's JupyterLab with Go and the GoNB kernel, for docker-compose.yml.
# Installed by the same scripts/setup.sh as `make workshop` on a host: pinned venv
# (requirements.txt), gonb/goimports/gopls (tools/go.mod), the kernelspec inside the
# venv, the offline echarts asset and a warm Go build cache.
# No `# syntax=` line: it would make BuildKit fetch a frontend image from Docker
# Hub on every build; the builder's own Dockerfile frontend reads this file.
FROM golang:1.26.8-bookworm

# Python 3.11 with venv for JupyterLab, npm for the pinned echarts asset, curl for
# readiness checks. Debian bookworm's python3 is 3.11.2: requirements.txt installs
# on it (deploy/requirements_test.go checks).
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv npm curl \
    && rm -rf /var/lib/apt/lists/*

# The user that builds everything. Whoever owns the mounted workspace/ runs the
# lab (scripts/lab-entrypoint.sh), with the group workshop as a second group: the
# home, the venv and the Go caches are built group-writable (umask 0002,
# -modcacherw) so that user can use and extend them without a copy or a chown.
RUN groupadd --gid 1000 workshop \
    && useradd --create-home --uid 1000 --gid workshop --shell /bin/bash workshop \
    && chmod 2775 /home/workshop
USER workshop
# Made by the user itself, so it owns it whatever the builder does with WORKDIR.
RUN umask 0002 && mkdir -p /home/workshop/workshop
ENV GOPATH=/home/workshop/go \
    GOCACHE=/home/workshop/.cache/go-build \
    GOFLAGS=-modcacherw
WORKDIR /home/workshop/workshop

# First the install inputs only, so editing notebooks or Go code does not reinstall
# JupyterLab and rebuild the tools.
COPY --chown=workshop:workshop requirements.txt ./
COPY --chown=workshop:workshop tools/ tools/
COPY --chown=workshop:workshop scripts/ scripts/
COPY --chown=workshop:workshop jupyter/ jupyter/
RUN umask 0002 && SETUP_SKIP_WARM=1 scripts/setup.sh

# Then the workshop itself, and the same script again: it skips what is done and
# warms the build cache with queuekit and its dependencies.
COPY --chown=workshop:workshop . .
RUN umask 0002 && scripts/setup.sh

# Inside the container JupyterLab listens on all interfaces; docker-compose.yml
# publishes the port on 127.0.0.1 only. workshop.sh re-runs setup.sh (quick) and
# copies the notebooks and the echarts asset into workspace/, mounted from the host.
ENV LAB_IP=0.0.0.0 \
    LAB_PORT=8888 \
    PATH=/home/workshop/workshop/.venv/bin:$PATH
EXPOSE 8888
# The entrypoint starts as root only to look at who owns the mounted workspace/
# and drop to that user (setpriv) before it runs CMD; nothing else runs as root.
USER root
ENTRYPOINT ["scripts/lab-entrypoint.sh"]
CMD ["scripts/workshop.sh"]
