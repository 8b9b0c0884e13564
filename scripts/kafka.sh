#!/usr/bin/env bash
# The project's Kafka broker for people: `scripts/kafka.sh start [PORT]` starts one KRaft node
# on 127.0.0.1 in the background (its data and pid in .cache/kafka/) and prints its address;
# `stop` ends it and removes its data; `status` says whether it runs. Its jars come from Maven
# Central through `scripts/setup.sh` (or the command printed when they are missing).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    echo "kafka: run 'bash scripts/setup.sh' first (it installs sjoin and fetches the broker)" >&2
    exit 1
fi
action=${1:-status}
shift || true
exec .venv/bin/python -m sjoin.jvm.kafka_broker "$action" .cache/kafka "$@"
