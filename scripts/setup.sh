#!/usr/bin/env bash
# Installs the Debian packages ppsearch needs to build and test, no more.
# Idempotent: runs apt-get update/install only when a package is missing.
# --tests adds what only the tests run (a browser for report.html), which the
# main job does not need.
set -euo pipefail

PACKAGES=(
  # build: compiler, CMake + ninja, git for the sha recorded in evidence
  build-essential cmake ninja-build pkg-config git
  libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libfmt-dev
  libcurl4-openssl-dev libcpp-httplib-dev libevent-dev libsqlite3-dev libssl-dev libre2-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # test support: libpng decodes the screenshots of the report.html check
  libpng-dev
  # tests: the ssh e2e test starts an sshd; the fuzz tests need clang's libFuzzer
  openssh-server openssh-client clang libclang-rt-14-dev
)

if [ "${1:-}" = "--tests" ]; then
  # report.html is opened in headless Chromium (the browser e2e test, the page benchmark);
  # the slurm e2e test starts a Slurm cluster on this machine (munged, slurmctld, slurmd);
  # the ssh e2e test's privileged steps need sudo (a user who needs a password for it)
  # the probe's tests run its script on Debian's CPU PyTorch
  PACKAGES+=(chromium slurmctld slurmd slurm-client munge sudo python3-torch)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
