#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Remakes the EXIF capture-time fixtures (README.md): a 64x48 gradient through cjpeg
# (libjpeg-turbo-progs), tags written by exiftool (libimage-exiftool-perl). Run from this folder.
set -eu
python3 -c '
import sys
w, h = 64, 48
sys.stdout.buffer.write(b"P6 %d %d 255\n" % (w, h))
sys.stdout.buffer.write(bytes(v for y in range(h) for x in range(w) for v in (x * 4, y * 5, 128)))
' > /tmp/exif-dates.ppm
for name in taken-offset taken-local taken-bigendian no-date; do
    cjpeg -quality 85 -outfile "$name.jpg" /tmp/exif-dates.ppm
done
exiftool -q -overwrite_original -ExifByteOrder=II -DateTimeOriginal='2016:12:02 14:30:05' -OffsetTimeOriginal='+01:00' \
    -GPSLatitude=52.5163 -GPSLatitudeRef=N -GPSLongitude=13.3777 -GPSLongitudeRef=E taken-offset.jpg
exiftool -q -overwrite_original -DateTimeOriginal='2019:07:14 09:05:00' -ImageDescription='Lake' taken-local.jpg
exiftool -q -overwrite_original -ExifByteOrder=MM -DateTimeOriginal='2001:02:28 23:59:59' \
    -OffsetTimeOriginal='-05:00' -Orientation#=6 taken-bigendian.jpg
exiftool -q -overwrite_original -ImageDescription='No date here' no-date.jpg
rm -f /tmp/exif-dates.ppm
