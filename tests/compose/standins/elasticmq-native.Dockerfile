# STAND-IN for softwaremill/elasticmq-native:1.7.1, built by
# tests/compose/standins.sh where Docker Hub cannot be reached. Not the official
# image. The real one (native-server/Dockerfile at tag v1.7.1 in
# softwaremill/elasticmq) is alpine:3.22 + tini with a GraalVM native binary at
# /opt/elasticmq/bin/elasticmq-native-server, /opt/elasticmq.conf, running as
# root, ENTRYPOINT tini -- the binary -Dconfig.file=/opt/elasticmq.conf. This one
# keeps those paths, the entrypoint and root, with busybox as /bin/sh and wget
# (what the compose healthcheck runs, as on Alpine), but runs ElasticMQ 1.7.1
# from its Maven Central jars (the ones the host path installs) on Debian's
# openjdk-17-jre-headless: it starts in seconds instead of milliseconds and
# takes more memory.
FROM nightqueue-standin/bookworm-minbase:local
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/*
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends busybox tini \
    && rm -rf /var/lib/apt/lists/* \
    && ln -sf /usr/bin/tini /sbin/tini \
    && ln -sf /bin/busybox /usr/local/bin/wget \
    && ln -sf /bin/busybox /bin/sh
COPY elasticmq/lib/ /opt/elasticmq/lib/
COPY elasticmq/elasticmq.conf /opt/elasticmq.conf
COPY elasticmq/elasticmq-native-server /opt/elasticmq/bin/elasticmq-native-server
WORKDIR /opt/elasticmq
EXPOSE 9324
ENTRYPOINT ["/sbin/tini", "--", "/opt/elasticmq/bin/elasticmq-native-server", "-Dconfig.file=/opt/elasticmq.conf"]
LABEL nightqueue.stand-in="softwaremill/elasticmq-native:1.7.1" \
      org.opencontainers.image.title="STAND-IN for softwaremill/elasticmq-native:1.7.1 (tests/compose/standins.sh)" \
      nightqueue.stand-in.differs="ElasticMQ 1.7.1 jars on Debian openjdk-17-jre-headless instead of the GraalVM native binary on alpine:3.22; busybox sh and wget as on Alpine; same paths, entrypoint, root user"
