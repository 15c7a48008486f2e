// SPDX-License-Identifier: Apache-2.0
// kiosk-carousel: the executable is only this; everything else lives in KioskApp.
import Glibc
import KioskApp

exit(KioskApp.main(Array(CommandLine.arguments.dropFirst())))
