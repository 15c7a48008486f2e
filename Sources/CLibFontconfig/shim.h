// SPDX-License-Identifier: Apache-2.0
// fontconfig: finding installed fonts by family and by the characters they cover (Debian:
// libfontconfig-dev; runtime libfontconfig1, fonts from fonts-dejavu-core).
#include <fontconfig/fontconfig.h>
