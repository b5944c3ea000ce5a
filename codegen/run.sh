#!/usr/bin/env bash
# Regenerates src/protocol/messages from the schemas inside the pinned Kafka jars.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${KAFKA_VERSION:-4.4.0}"
repo="${MAVEN_REPO:-$HOME/.m2/repository}/org/apache/kafka"
for a in kafka-clients kafka-metadata kafka-raft; do
  jar="$repo/$a/$version/$a-$version.jar"
  [ -f "$jar" ] || mvn -B -q dependency:get -Dartifact="org.apache.kafka:$a:$version" -Dtransitive=false
done
python3 codegen/generate.py \
  --jar "$repo/kafka-clients/$version/kafka-clients-$version.jar" \
  --jar "$repo/kafka-metadata/$version/kafka-metadata-$version.jar" \
  --jar "$repo/kafka-raft/$version/kafka-raft-$version.jar" \
  --messages codegen/messages.txt --out src/protocol/messages --kafka-version "$version" \
  --arbitrary-out tests/codec_oracle/arbitrary
find src/protocol/messages tests/codec_oracle/arbitrary -name "*.rs" -print0 | xargs -0 rustfmt --edition 2021
