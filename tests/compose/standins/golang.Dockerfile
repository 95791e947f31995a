# STAND-IN for golang:1.26.8-bookworm, built by tests/compose/standins.sh where
# Docker Hub cannot be reached. Not the official image. What it is: a Debian
# bookworm root file system made with `debootstrap --variant=minbase` from the
# Debian mirror (imported as nightqueue-standin/bookworm-minbase), the packages
# the official image adds (buildpack-deps:bookworm-curl and -scm, then gcc g++
# libc6-dev make pkg-config), the build machine's Go toolchain in /usr/local/go,
# and the official image's ENV and WORKDIR. What differs: the Go toolchain is
# the machine's copy of the same release, not the tarball from go.dev; the
# debootstrap base is not the debian:bookworm image (same packages, no
# /etc/apt/apt.conf.d/docker-* tweaks); and it carries the build machine's CA
# certificates and points pip/npm/requests at the system bundle, because this
# machine's registry traffic passes a TLS-inspecting proxy.
FROM nightqueue-standin/bookworm-minbase:local
ARG GO_VERSION
COPY sources/debian.sources /etc/apt/sources.list.d/debian.sources
COPY ca/ /usr/local/share/ca-certificates/
RUN rm -f /etc/apt/sources.list \
    && apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       ca-certificates curl gnupg netbase sq wget \
       git mercurial openssh-client subversion procps \
       g++ gcc libc6-dev make pkg-config \
    && update-ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY go/ /usr/local/go/
ENV GOLANG_VERSION=${GO_VERSION} \
    GOTOOLCHAIN=local \
    GOPATH=/go \
    PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt \
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
RUN mkdir -p "$GOPATH/src" "$GOPATH/bin" && chmod -R 1777 "$GOPATH" && go version
WORKDIR /go
LABEL nightqueue.stand-in="golang:1.26.8-bookworm" \
      org.opencontainers.image.title="STAND-IN for golang:1.26.8-bookworm (tests/compose/standins.sh)" \
      nightqueue.stand-in.differs="the build machine's Go toolchain; a debootstrap minbase root instead of debian:bookworm; carries the build machine's CA certificates with SSL_CERT_FILE, PIP_CERT, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS set"
