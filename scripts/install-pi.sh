#!/usr/bin/env bash
# Install the Manhattan table companion on a Raspberry Pi (Raspberry Pi OS bookworm+).
#
#   sudo scripts/install-pi.sh [--ws281x] [--enable-spi] [--no-start] [--dry-run]
#
# What it does, and why:
#  * apt: python3-picamera2 (libcamera's Python bindings only come from apt) and
#    python3-lgpio (the only gpiozero pin backend that works on a Pi 5);
#  * a system user "companion" in the video, gpio and spi groups (camera, buttons,
#    LED strip over SPI) with no login shell;
#  * /opt/companion/.venv created with --system-site-packages so it sees apt's
#    picamera2, and this checkout installed into it with the [pi] extra. numpy is
#    kept at the system's major version: apt's simplejpeg (imported by picamera2)
#    is compiled against it and fails with "numpy.dtype size changed" otherwise;
#  * systemd/companion.service installed, enabled and started; with --ws281x also
#    the root drop-in for the rpi_ws281x LED backend (refused on a Pi 5);
#  * SPI: a hint when /dev/spidev0.0 is missing, or --enable-spi to switch it on.
#
# `make install-pi` runs this script. --dry-run prints the commands instead.
set -euo pipefail

PREFIX=/opt/companion
SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SERVICE_USER=companion
STATE_DIR=/var/lib/companion
UNIT_DIR=/etc/systemd/system
WS281X=0
ENABLE_SPI=0
START=1
DRY_RUN=0
MODEL_FILE=/proc/device-tree/model

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    cat <<EOF

Options:
  --prefix DIR     install into DIR (default $PREFIX)
  --source DIR     the companion checkout to install (default $SOURCE)
  --ws281x         use the rpi_ws281x LED backend (runs the service as root)
  --enable-spi     enable SPI with raspi-config (takes effect after a reboot)
  --no-start       install and enable the service, but do not start it
  --dry-run        print what would be done, change nothing
  -h, --help       this text
EOF
}

die() {
    echo "install-pi: $*" >&2
    exit 1
}

note() {
    echo "install-pi: $*"
}

run() {
    if [[ $DRY_RUN -eq 1 ]]; then
        printf '+'
        printf ' %q' "$@"
        printf '\n'
    else
        "$@"
    fi
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --prefix) PREFIX="${2:?--prefix needs a directory}"; shift 2 ;;
        --source) SOURCE="${2:?--source needs a directory}"; shift 2 ;;
        --ws281x) WS281X=1; shift ;;
        --enable-spi) ENABLE_SPI=1; shift ;;
        --no-start) START=0; shift ;;
        --dry-run) DRY_RUN=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown option: $1" ;;
    esac
done

VENV="$PREFIX/.venv"
[[ -f "$SOURCE/pyproject.toml" ]] || die "$SOURCE is not a companion checkout (no pyproject.toml)"
[[ -f "$SOURCE/systemd/companion.service" ]] || die "missing $SOURCE/systemd/companion.service"
if [[ $DRY_RUN -eq 0 && $EUID -ne 0 ]]; then
    die "run as root: sudo $0 $*"
fi

MODEL=""
if [[ -r $MODEL_FILE ]]; then
    MODEL="$(tr -d '\0' <"$MODEL_FILE")"
fi
if [[ $MODEL != *"Raspberry Pi"* ]]; then
    note "warning: this does not look like a Raspberry Pi (model: ${MODEL:-unknown})"
fi
if [[ $WS281X -eq 1 && $MODEL =~ Raspberry\ Pi\ (5|500|Compute\ Module\ 5) ]]; then
    die "rpi_ws281x does not support the Raspberry Pi 5: use the spi backend (drop --ws281x)"
fi

# 1. System packages.
run apt-get update
run apt-get install -y --no-install-recommends \
    python3-venv python3-pip python3-picamera2 python3-lgpio

# 2. Groups and the service user.
for group in video gpio spi; do
    if ! getent group "$group" >/dev/null; then
        run groupadd --system "$group"
    fi
done
if ! id -u "$SERVICE_USER" >/dev/null 2>&1; then
    run useradd --system --user-group --home-dir "$STATE_DIR" --no-create-home \
        --shell /usr/sbin/nologin "$SERVICE_USER"
fi
run usermod -aG video,gpio,spi "$SERVICE_USER"
run install -d -o "$SERVICE_USER" -g "$SERVICE_USER" -m 0750 "$STATE_DIR"

# 3. The virtual environment (root-owned: the service can run the code, not change it).
run install -d -m 0755 "$PREFIX"
run python3 -m venv --system-site-packages "$VENV"
run "$VENV/bin/python" -m pip install --upgrade pip
CONSTRAINTS="$PREFIX/constraints.txt"
# (both overridable from the environment, for --dry-run's tests)
SYSTEM_NUMPY="${SYSTEM_NUMPY-$(python3 -c 'import numpy; print(numpy.__version__)' 2>/dev/null || true)}"
ARCH="${ARCH:-$(uname -m)}"
if [[ $SYSTEM_NUMPY == 1.* ]]; then
    note "system numpy is $SYSTEM_NUMPY: keeping the venv on numpy<2 for apt's picamera2"
    PINS='numpy<2'
    if [[ $ARCH == aarch64 ]]; then
        # the last OpenCV for numpy 1 (4.12 wants numpy 2): the suite runs on it, its
        # exact readings measured under constraints.txt's 5.0 differ a little
        PINS+=$'\nopencv-python-headless==4.11.0.86'
    fi
elif [[ $ARCH == aarch64 ]]; then
    # the versions the readings were measured with (PyPI has their aarch64 wheels;
    # 32-bit Raspberry Pi OS takes what piwheels has)
    PINS="$(grep -v '^#' "$SOURCE/constraints.txt")"
else
    PINS=""
fi
if [[ $DRY_RUN -eq 1 ]]; then
    printf '+ %s > %s\n' "${PINS//$'\n'/; }" "$CONSTRAINTS"
else
    printf '%s\n' "$PINS" >"$CONSTRAINTS"
fi
run "$VENV/bin/python" -m pip install --constraint "$CONSTRAINTS" "${SOURCE}[pi]"

# 4. SPI for the LED strip (GPIO10, /dev/spidev0.0).
if [[ ! -e /dev/spidev0.0 ]]; then
    if [[ $ENABLE_SPI -eq 1 ]]; then
        if command -v raspi-config >/dev/null; then
            run raspi-config nonint do_spi 0
        else
            CONFIG=/boot/firmware/config.txt
            [[ -f $CONFIG ]] || CONFIG=/boot/config.txt
            if ! grep -q '^dtparam=spi=on' "$CONFIG" 2>/dev/null; then
                if [[ $DRY_RUN -eq 1 ]]; then
                    echo "+ echo dtparam=spi=on >> $CONFIG"
                else
                    echo 'dtparam=spi=on' >>"$CONFIG"
                fi
            fi
        fi
        note "SPI enabled: reboot before the LED strip works"
    else
        note "hint: SPI is off (no /dev/spidev0.0); the LED strip needs it. Enable it with"
        note "      sudo raspi-config nonint do_spi 0   (or dtparam=spi=on in"
        note "      /boot/firmware/config.txt), or rerun with --enable-spi, then reboot"
    fi
fi

# 5. The service.
run install -m 0644 "$SOURCE/systemd/companion.service" "$UNIT_DIR/companion.service"
DROPIN="$UNIT_DIR/companion.service.d/ws281x.conf"
if [[ $WS281X -eq 1 ]]; then
    run install -D -m 0644 "$SOURCE/systemd/companion-ws281x.conf" "$DROPIN"
elif [[ -e $DROPIN ]]; then
    run rm -f "$DROPIN"
fi
if [[ $PREFIX != /opt/companion ]]; then
    run sed -i "s|/opt/companion/.venv|$VENV|" "$UNIT_DIR/companion.service"
fi
run systemctl daemon-reload
if [[ $START -eq 1 ]]; then
    run systemctl enable --now companion.service
else
    run systemctl enable companion.service
fi

note "done. Check the hardware with:"
note "  sudo -u $SERVICE_USER $VENV/bin/python -m hardware.doctor"
note "and the service with: systemctl status companion; journalctl -u companion -f"
