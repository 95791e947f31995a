# The workshop's JupyterLab with Go and the GoNB kernel, for docker-compose.yml.
# Installed by the same launcher as `make workshop` on a host (queuekit setup): pinned
# venv (requirements.txt), gonb/goimports/gopls (tools/go.mod), the kernelspec inside the
# venv, the offline echarts asset (downloaded pinned, no npm) and a warm Go build cache.
# No `# syntax=` line: it would make BuildKit fetch a frontend image from Docker
# Hub on every build; the builder's own Dockerfile frontend reads this file.
FROM golang:1.26.8-bookworm

# Python 3.11 with venv for JupyterLab, curl for readiness checks. Debian bookworm's
# python3 is 3.11.2: requirements.txt installs on it (deploy/requirements_test.go
# checks). No Node, no Maven, no Java: the servers are docker-compose.yml's.
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv curl \
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
# JupyterLab nor recompile the tools: the venv from requirements.txt (pinned), and
# gonb/goimports/gopls compiled once into the Go build cache (tools/go.mod).
COPY --chown=workshop:workshop requirements.txt ./
COPY --chown=workshop:workshop tools/ tools/
RUN umask 0002 && python3 -m venv .venv \
    && .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-input -r requirements.txt \
    && cd tools && GOBIN=/tmp/tools go install github.com/janpfeifer/gonb golang.org/x/tools/cmd/goimports golang.org/x/tools/gopls \
    && rm -rf /tmp/tools

# Then the workshop itself: the launcher (queuekit, built into .cache/bin) and
# queuekit setup, which skips what is done and warms the build cache with
# queuekit and its dependencies.
COPY --chown=workshop:workshop . .
RUN umask 0002 && go build -o .cache/bin/queuekit ./queuekit/cmd/queuekit && .cache/bin/queuekit setup

# Inside the container JupyterLab listens on all interfaces; docker-compose.yml
# publishes the port on 127.0.0.1 only. queuekit workshop re-runs setup (quick),
# uses compose's servers (AWS_ENDPOINT_URL_*) and copies the notebooks and the
# echarts asset into workspace/, mounted from the host.
ENV LAB_IP=0.0.0.0 \
    LAB_PORT=8888 \
    PATH=/home/workshop/workshop/.venv/bin:$PATH
EXPOSE 8888
# The entrypoint starts as root only to look at who owns the mounted workspace/
# and drop to that user (setpriv) before it runs CMD; nothing else runs as root.
USER root
ENTRYPOINT ["scripts/lab-entrypoint.sh"]
CMD [".cache/bin/queuekit", "workshop"]
