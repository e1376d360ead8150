#!/usr/bin/env bash
# What `make test` needs besides the virtualenv: Java 17+ (the test ZooKeeper and Spark; a JDK and Maven for
# the real Kafka clusters of tests/real, whose jars `make jars` fetches once), Debian's Jetty 9.4
# for the AdminServer of one member of the test ensemble (pyspark ships only a shaded Jetty), and, for the
# history report's browser test, Debian's Chromium and its driver. Java missing fails loudly; the packages
# are installed with apt when they are missing and this user can install packages, and otherwise the tests
# that need them say in one line what is missing. --check: only what make check needs (it runs no browser
# and no real-cluster test), so no Chromium, JDK or Maven.
set -euo pipefail
everything=1
if [ "${1:-}" = "--check" ]; then
  everything=0
fi

if ! command -v java >/dev/null 2>&1; then
  echo "FATAL: Java 17+ is required to run the test ZooKeeper and Spark (apt-get install openjdk-17-jre-headless)" >&2
  exit 1
fi
major=$(java -version 2>&1 | sed -n 's/.* version "\([0-9]*\).*/\1/p' | head -n 1)
if [ -z "$major" ] || [ "$major" -lt 17 ]; then
  echo "FATAL: Java 17+ is required; found: $(java -version 2>&1 | head -n 1)" >&2
  exit 1
fi

missing=()
# the real-cluster tests (tests/real) compile their AdminClient helper (a JDK's javac) and fetch their
# pinned Kafka jars once (make jars: Maven)
if [ "$everything" -eq 1 ] && ! command -v javac >/dev/null 2>&1; then
  missing+=(openjdk-17-jdk-headless)
fi
if [ "$everything" -eq 1 ] && ! command -v mvn >/dev/null 2>&1; then
  missing+=(maven)
fi
if [ "$everything" -eq 1 ] && { ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; }; then
  missing+=(chromium chromium-driver)
fi
if [ ! -f /usr/share/java/jetty9-server.jar ] || [ ! -f /usr/share/java/servlet-api.jar ]; then
  missing+=(libjetty9-java libservlet-api-java)
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO="sudo -n"
else
  echo "note: ${missing[*]} are missing and this user cannot install them; the tests that need them" \
    "will fail until 'apt-get install ${missing[*]}' is run" >&2
  exit 0
fi
echo "installing ${missing[*]} for the tests (apt-get)" >&2
$SUDO apt-get update -q >/dev/null
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}" >/dev/null
