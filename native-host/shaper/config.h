/* ProtoLens shaper: the config text format (config.c), parsed into a schedule of the link model
 * (model.h). Pure: text in, schedule or a one-line error out. */
#ifndef PL_CONFIG_H
#define PL_CONFIG_H

#include <stddef.h>

#include "model.h"

/* Config text -> schedule. Returns 0, or -1 with a one-line message in err. */
int sh_parse_config(const char *text, sh_schedule *out, char *err, size_t errlen);
const char *sh_key_name(int key);

#endif
