#!/usr/bin/env bash
# What `make test` needs besides the virtualenv: Java 17+ (the test ZooKeeper and Spark) and, for the
# history report's browser test, Debian's Chromium and its driver. Java missing fails loudly; Chromium is
# installed with apt when it is missing and this user can install packages, and otherwise the report
# test says in one line what is missing.
set -euo pipefail

if ! command -v java >/dev/null 2>&1; then
  echo "FATAL: Java 17+ is required to run the test ZooKeeper and Spark (apt-get install openjdk-17-jre-headless)" >&2
  exit 1
fi
major=$(java -version 2>&1 | sed -n 's/.* version "\([0-9]*\).*/\1/p' | head -n 1)
if [ -z "$major" ] || [ "$major" -lt 17 ]; then
  echo "FATAL: Java 17+ is required; found: $(java -version 2>&1 | head -n 1)" >&2
  exit 1
fi

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO="sudo -n"
else
  echo "note: chromium and chromium-driver are missing and this user cannot install them;" \
    "the report's browser test will fail until 'apt-get install chromium chromium-driver' is run" >&2
  exit 0
fi
echo "installing chromium and chromium-driver for the report's browser test (apt-get)" >&2
$SUDO apt-get update -q >/dev/null
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium chromium-driver >/dev/null
