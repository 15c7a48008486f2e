#ifndef KC_IMAGE_H
#define KC_IMAGE_H
// (filled in by the imaging work)
#endif
