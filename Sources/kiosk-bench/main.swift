// SPDX-License-Identifier: Apache-2.0
// kiosk-bench: kiosk-carousel's performance figures, each beside a reference measured in the
// same run.
//
//   swift run -c release kiosk-bench [--quick] [--photo PATH] [--keep] [--warm-start-only] [--huge-body-only]
//                                    [--formats-only]
//                                    [--text-only] [--decode-only] [--colour-only]
//
// The parent process only prepares inputs and prints the table; every measurement runs in a
// child (this executable again with the hidden `--case NAME ...`, the reference tools, the C
// reference loops compiled at run time with `gcc -O3`), so wall time and peak RSS are those of
// one whole process each.
import Glibc

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--case" {
    exit(ChildCase.run(Array(arguments.dropFirst())))
}
// The soak on the virtual clock (Tests/soak/virtual-clock.sh sets up DIR and the server).
if arguments.first == "--soak" {
    guard arguments.count == 4, let transitions = Int(arguments[3]) else {
        fputs("usage: kiosk-bench --soak DIR MANIFEST-URL TRANSITIONS\n", stderr)
        exit(64)
    }
    exit(Soak.run(dir: arguments[1], manifestURL: arguments[2], transitions: transitions))
}

var settings = Bench.Settings()
while let a = arguments.first {
    arguments.removeFirst()
    switch a {
    case "--quick":
        settings.quick = true
        settings.decodeRuns = 3
        settings.kernelIterations = 15
        settings.kernelWarmup = 2
        settings.kernelRounds = 1
        settings.appRuns = 1
        settings.warmStartRuns = 3
    case "--photo":
        guard let p = arguments.first else { fputs("kiosk-bench: --photo needs a path\n", stderr); exit(64) }
        settings.photo = p
        arguments.removeFirst()
    case "--warm-start-only":
        settings.warmStartOnly = true
    case "--huge-body-only":
        settings.hugeBodyOnly = true
    case "--formats-only":
        settings.formatsOnly = true
    case "--text-only":
        settings.textOnly = true
    case "--decode-only":
        settings.decodeOnly = true
    case "--colour-only":
        settings.colourOnly = true
    case "--progressive-peak-only":
        settings.progressivePeakOnly = true
    case "--keep":
        settings.keepScratch = true
    case "-h", "--help":
        print("""
        usage: kiosk-bench [--quick] [--photo PATH] [--keep] [--warm-start-only] [--huge-body-only] [--formats-only] \
        [--text-only]
                           [--progressive-peak-only] [--decode-only] [--colour-only]
          --quick       fewer runs and frames (for CI)
          --photo PATH  the 14.7 MP progressive JPEG (default Tests/Fixtures/photos/volna-5120x2880.jpg)
          --keep        keep the scratch directory (generated JPEGs, compiled C reference)
          --warm-start-only  only section 6 (start to first frame, warm cache, no network)
          --huge-body-only   only section 7 (the whole program against a server streaming 1 GB)
          --formats-only     only section 3b (a 12 MP HEIC and a 24 MP WebP made from the photo)
          --text-only        only section 8 (caption prepare and clock overlay costs)
          --colour-only      only section 9 (colour conversion and HDR tone mapping of 12 MP pictures)
          --progressive-peak-only  only section 3's peak RSS of the whole program showing the progressive photo
          --decode-only      only section 1 (JPEG decode + fit, beside djpeg, vipsthumbnail and no DCT scaling)
        Needs gcc, vipsthumbnail and vips (libvips-tools), djpeg and cjpeg (libjpeg-turbo-progs),
        heif-enc and heif-convert (libheif-examples), cwebp and dwebp (webp), avifenc (libavif-bin).
        """)
        exit(0)
    default:
        fputs("kiosk-bench: unknown option \(a) (see --help)\n", stderr)
        exit(64)
    }
}
exit(Bench(settings).run())
