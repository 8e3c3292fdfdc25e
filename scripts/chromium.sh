# Sourced by scripts/test.sh and .ci/run: the console's browser suite drives
# Debian's headless Chromium through chromedriver.
source "$(dirname "${BASH_SOURCE[0]}")/debian.sh"

# Makes sure /usr/bin/chromium and /usr/bin/chromedriver are installed.
ensure_chromium_installed() {
  if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    return 0
  fi
  install_debian_packages "the console's browser tests need Chromium and ChromeDriver" chromium chromium-driver
}
