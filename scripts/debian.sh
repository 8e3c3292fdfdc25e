# Sourced by scripts/postgres.sh and scripts/chromium.sh: Debian packages the
# tests need, installed when this runs as root or may use sudo without a
# password.

# install_debian_packages WHY PACKAGE...: installs the packages with apt-get,
# refreshing the package lists only when the first try fails. Without
# apt-get, root or passwordless sudo, says in one line what to install and
# returns 1.
install_debian_packages() {
  local why=$1
  shift
  local apt=()
  if [ "$(id -u)" -eq 0 ]; then
    apt=(apt-get)
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    apt=(sudo apt-get)
  fi
  if [ ${#apt[@]} -eq 0 ] || ! command -v apt-get >/dev/null; then
    echo "$why: install $* (Debian/Ubuntu: sudo apt-get install $*), then run this again" >&2
    return 1
  fi
  echo "installing $* (Debian's packages): $why" >&2
  DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y "$@" >/dev/null ||
    { "${apt[@]}" update >/dev/null && DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y "$@" >/dev/null; }
}
