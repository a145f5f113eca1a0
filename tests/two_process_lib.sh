# Shared scaffolding of the two-process test scripts; source it:
#   . "$(dirname "$0")/.../tests/two_process_lib.sh"
#   tp_init NAME             scratch dir $tp_dir, messages prefixed NAME:,
#                            the server is stopped and $tp_dir removed on exit
#   tp_fail MESSAGE...       say why, show the server's output, exit 1
#   tp_start_server SECS CMD...
#                            CMD in the background under a SECS time limit,
#                            its output in $tp_dir/server.log; stopped with
#                            $tp_stop_signal (TERM unless set before)
#   tp_wait_addr REGEX       the last word of the first line of the server's
#                            output matching REGEX, into $tp_addr (30 s limit)
#   tp_start_fifo_server CMD...
#                            CMD in the background with QS_TEST_ADDR_FILE set
#                            to a FIFO; the address it writes there goes into
#                            $tp_addr (60 s limit)
#   tp_wait_server           wait for the server; its exit status in $tp_rc
tp_name=two-process
# The signal that stops a server left running at exit (or past its time
# limit): TERM, or KILL for a server that cannot take TERM cleanly. Under
# ThreadSanitizer, SIGTERM to a process that loaded libfabric (which
# installs its own handler) runs the exit path inside the signal handler,
# reported as a signal-unsafe call.
tp_stop_signal=${tp_stop_signal:-TERM}
tp_dir=
tp_pid=
tp_addr=
tp_rc=
tp_sanitizer_re='(ERROR|WARNING|FATAL): (Address|Leak|Thread|UndefinedBehavior)Sanitizer|: runtime error: '

tp_cleanup() {
  if [ -n "$tp_pid" ] && kill -0 "$tp_pid" 2>/dev/null; then
    # timeout takes SIGALRM for its own time-out and sends the server its
    # -s signal ($tp_stop_signal); any other signal it passes on as is.
    if [ "$tp_stop_signal" = KILL ]; then
      kill -ALRM "$tp_pid" 2>/dev/null
    else
      kill "$tp_pid" 2>/dev/null
    fi
    wait "$tp_pid" 2>/dev/null
  fi
  # A sanitizer report of the server goes into the case's output, where
  # ctest's FAIL_REGULAR_EXPRESSION (cmake/QsTestVerdict.cmake) sees it
  # whatever the script's exit status.
  if [ -n "$tp_dir" ] && grep -qE "$tp_sanitizer_re" "$tp_dir/server.log" 2>/dev/null; then
    echo "--- $tp_name: the server's output has a sanitizer report ---" >&2
    cat "$tp_dir/server.log" >&2
  fi
  [ -n "$tp_dir" ] && rm -rf "$tp_dir"
}

tp_init() {
  tp_name=$1
  tp_dir=$(mktemp -d)
  : >"$tp_dir/server.log"
  trap tp_cleanup EXIT
}

tp_fail() {
  echo "$tp_name: $*" >&2
  echo "--- server output ---" >&2
  cat "$tp_dir/server.log" >&2
  exit 1
}

tp_start_server() {
  local secs=$1
  shift
  # Emptied here, not by the background job's redirection: tp_wait_addr
  # may read the log before that job starts, and must not find the
  # address of the server before.
  : >"$tp_dir/server.log"
  timeout -s "$tp_stop_signal" --kill-after=5 "$secs" "$@" >>"$tp_dir/server.log" 2>&1 &
  tp_pid=$!
}

tp_wait_addr() {
  tp_addr=
  for _ in $(seq 1 300); do
    tp_addr=$(grep -oE "$1" "$tp_dir/server.log" | head -n 1 | awk '{print $NF}')
    [ -n "$tp_addr" ] && return 0
    kill -0 "$tp_pid" 2>/dev/null ||
      tp_fail "server exited before printing its address"
    sleep 0.1
  done
  tp_fail "no address from the server after 30 s"
}

tp_start_fifo_server() {
  mkfifo "$tp_dir/addr"
  # Open read-write so neither side blocks on open, and a server that dies
  # before writing cannot leave this script waiting forever.
  exec 3<>"$tp_dir/addr"
  QS_TEST_ADDR_FILE="$tp_dir/addr" "$@" &
  tp_pid=$!
  tp_addr=
  if ! read -r -t 60 tp_addr <&3 || [ -z "$tp_addr" ]; then
    exec 3<&-
    tp_fail "the server did not publish an address"
  fi
  exec 3<&-
}

tp_wait_server() {
  wait "$tp_pid"
  tp_rc=$?
  tp_pid=
}
