// libpng 1.6 (Debian: libpng-dev).
#include <png.h>
