// SPDX-License-Identifier: Apache-2.0
// libjpeg-turbo (Debian: libjpeg62-turbo-dev). jpeglib.h needs stdio.h first.
#include <stdio.h>
#include <jpeglib.h>
