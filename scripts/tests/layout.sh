#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The direction of the source tree's dependencies (Documentation/
# source-tree.rst), checked over #include lines:
#   hw      hw/ (the hardware contract) includes only hw/ and system headers
#   card    nothing outside qemu-device/ includes the card's headers, except
#           that libspyre's sim backend (libspyre/src/sim/) and bench/ embed
#           the card model through its public headers
#   driver  nothing outside driver/ includes the driver's headers
# An include is resolved as the compiler first tries it, next to the
# including file; a name not found there counts as the tree's header of
# that name. A planted tree first shows the check finds what it must.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. scripts/tests/lib.sh

# The card model's public interface, and who may embed the card.
card_public=" spyre_model.h spyre_float.h "
card_users='^(libspyre/src/sim|bench)/'

# Source files of the tree at $1 (git's view when it is a checkout).
sources() {
	if git -C "$1" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$1" ls-files -co --exclude-standard -- \
			'*.c' '*.h' '*.cc' '*.cpp' '*.hpp'
	else
		(cd "$1" && find . -type f \( -name '*.[ch]' -o -name '*.cc' -o -name '*.cpp' \
			-o -name '*.hpp' \) | sed 's|^\./||')
	fi
}

# Basenames of the headers under directory $2 of the tree at $1, space separated.
headers() {
	(cd "$1" && find "$2" -name '*.h' -printf '%f ' 2>/dev/null)
}

# "q NAME" or "a NAME" for each #include "NAME" / <NAME> of file $1.
includes() {
	sed -nE -e 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/q \1/p' \
		-e 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<([^>]+)>.*/a \1/p' "$1"
}

# Prints "RULE FILE -> INCLUDE" for every include of the tree at $1 that
# breaks a rule.
violations() {
	local root=$1 f kind inc dir where card driver
	card=" $(headers "$root" qemu-device) "
	driver=" $(headers "$root" driver) "
	while IFS= read -r f; do
		dir=$(dirname "$f")
		while read -r kind inc; do
			where=
			if [ "$kind" = q ] && [ -e "$root/$dir/$inc" ]; then
				where=$(realpath -m --relative-to="$root" "$root/$dir/$inc")
			fi
			case "$f" in
			hw/*)
				[ "$kind" = q ] && [[ "$where" != hw/* ]] && echo "hw $f -> $inc"
				;;
			esac
			case "$f" in
			qemu-device/*) ;;
			*)
				if [[ "$inc" == *qemu-device/* || "$where" == qemu-device/* ]]; then
					echo "card $f -> $inc"
				elif [ -z "$where" ] && [[ "$card" == *" ${inc##*/} "* ]]; then
					[[ "$card_public" == *" ${inc##*/} "* && "$f" =~ $card_users ]] ||
						echo "card $f -> $inc"
				fi
				;;
			esac
			case "$f" in
			driver/*) ;;
			*)
				if [[ "$inc" == *driver/* || "$where" == driver/* ]] ||
				   { [ -z "$where" ] && [[ "$driver" == *" ${inc##*/} "* ]]; }; then
					echo "driver $f -> $inc"
				fi
				;;
			esac
		done < <(includes "$root/$f")
	done < <(sources "$root")
}

# A tree with one file per rule broken and the allowed cases next to them.
plant=$(mktemp -d)
trap 'rm -rf "$plant"' EXIT
mkdir -p "$plant"/{hw,driver,qemu-device/model,libspyre/src/sim,libspyre/tests,selftests,bench}
for h in hw/spyre_hw.h driver/spyre_drv.h qemu-device/model/spyre_internal.h \
	qemu-device/model/spyre_model.h qemu-device/tests.h libspyre/tests/harness.h; do
	echo '#include <stdint.h>' >"$plant/$h"
done
echo '#include "tests.h"' >>"$plant/qemu-device/model/spyre_model.h"
printf '#include "spyre_hw.h"\n#include "../driver/spyre_drv.h"\n' >"$plant/hw/bad.h"
printf '#include "spyre_internal.h"\n#include "spyre_hw.h"\n' >"$plant/libspyre/src/bad.c"
echo '#include "spyre_model.h"' >"$plant/libspyre/src/sim/sim.c"
echo '#include "spyre_model.h"' >"$plant/libspyre/src/also_bad.c"
echo '#include "../../qemu-device/tests.h"' >"$plant/bench/bad.c"
echo '#include "harness.h"' >"$plant/libspyre/tests/t.c"
echo '#include <spyre_drv.h>' >"$plant/selftests/bad.c"
echo '#include "spyre_drv.h"' >"$plant/driver/ok.c"
want="card bench/bad.c -> ../../qemu-device/tests.h
card libspyre/src/also_bad.c -> spyre_model.h
card libspyre/src/bad.c -> spyre_internal.h
driver hw/bad.h -> ../driver/spyre_drv.h
driver selftests/bad.c -> spyre_drv.h
hw hw/bad.h -> ../driver/spyre_drv.h"
got=$(violations "$plant" | sort)
if [ "$got" = "$want" ]; then
	ok "a planted tree's broken includes are found, and only those"
else
	not_ok "a planted tree's broken includes are found, and only those" \
		"$(diff <(echo "$want") <(echo "$got"))"
fi

found=$(violations . | sort -u)
rule() {
	local hits
	hits=$(grep "^$1 " <<<"$found")
	if [ -z "$hits" ]; then ok "$2"; else not_ok "$2" "$hits"; fi
}
rule hw "hw/ includes only hw/ and system headers"
rule card "only the card, libspyre's sim and bench/ include qemu-device/ (those two its public headers)"
rule driver "nothing outside driver/ includes the driver's headers"
finish
