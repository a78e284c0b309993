# Sourced by the tests that start `warden serve --port 0`: listening_port LOG prints the port
# the server's start-up line in LOG names, waiting up to 90 s for it (start-up fits the guard on
# the bank: seconds in Release, far longer under a sanitizer); nothing if it never came.
listening_port() {
  local port=
  for _ in $(seq 1 1800); do
    port=$(grep -o 'listening=http://127.0.0.1:[0-9]*' "$1" | grep -o '[0-9]*$' || true)
    [[ -n "$port" ]] && break
    sleep 0.05
  done
  echo "$port"
}
