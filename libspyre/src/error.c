// SPDX-License-Identifier: MIT
/*
 * Per-thread error messages: every failing call leaves a sentence naming the
 * device and the call, so a user sees why without a debugger.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static _Thread_local char last_error[512];

const char *spyre_last_error(void)
{
	return last_error;
}

const char *spy_strerr(int err)
{
	return strerror(err < 0 ? -err : err);
}

/* Format the thread's message and return @err (a negative errno) for chaining. */
int spy_err(int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(last_error) - 24)
		snprintf(last_error + n, sizeof(last_error) - n, " (%s)", spy_strerr(err));
	return err;
}

/*
 * Message for a failed backend call on @dev: "CALL: DEV: WHAT", with the
 * usual meanings of the driver's errnos spelt out.
 */
int spy_dev_err(spyre_device *dev, int err, const char *call, const char *fmt, ...)
{
	char what[320];
	const char *hint = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	switch (err) {
	case -ENODEV:
		hint = ": device lost (removed, or its reset failed)";
		break;
	case -ECANCELED:
		hint = ": the queue was banned after one of its jobs hung";
		break;
	case -ENOMEM:
		hint = ": out of memory";
		break;
	case -E2BIG:
		hint = ": larger than the device can ever hold";
		break;
	}
	return spy_err(err, "%s: %s: %s%s", call, dev ? dev->name : "?", what, hint);
}
