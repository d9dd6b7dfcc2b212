# SPDX-License-Identifier: MIT
# Tiny TAP-ish helpers for the shell test scripts.
t_pass=0
t_fail=0
t_n=0
ok() {
	t_n=$((t_n + 1))
	t_pass=$((t_pass + 1))
	echo "ok $t_n - $1"
}
not_ok() {
	t_n=$((t_n + 1))
	t_fail=$((t_fail + 1))
	echo "not ok $t_n - $1"
	[ -n "${2:-}" ] && sed 's/^/#   /' <<<"$2"
	return 0
}
# expect_status WANT DESC CMD... : CMD's exit status must be WANT
expect_status() {
	local want=$1 desc=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" = "$want" ]; then ok "$desc"; else not_ok "$desc (exit $rc, want $want)" "$out"; fi
	LAST_OUT=$out
}
# expect_output REGEX DESC : the last command's output must match
expect_output() {
	if grep -Eq -- "$1" <<<"$LAST_OUT"; then ok "$2"; else not_ok "$2" "$LAST_OUT"; fi
}
finish() {
	echo "$t_pass passed, $t_fail failed"
	[ "$t_fail" = 0 ]
}
