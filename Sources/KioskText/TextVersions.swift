// SPDX-License-Identifier: Apache-2.0
internal import CKioskText
import KioskSystem

/// FreeType, HarfBuzz, fontconfig and FriBidi for `--version`: each opened on its own (the show
/// opens the four together when it first needs text, ``TextLibraries``), so one that is missing
/// is named alone. The run-time calls are FT_Library_Version (freetype.h: it needs a library
/// handle, made and freed here), hb_version_string (hb-version.h) and FcGetVersion
/// (fontconfig.h: MMmmrr in decimal); FriBidi's is the variable `fribidi_version_info`
/// (fribidi.h: "(GNU FriBidi) 1.0.8" and more lines). The headers' versions are
/// FREETYPE_MAJOR.MINOR.PATCH, HB_VERSION_STRING, FC_MAJOR.MINOR.REVISION and FRIBIDI_VERSION.
public enum TextVersions {
    public static var versions: [LibraryVersion] {
        [
            SharedLibrary.version("FreeType", soname: KC_FREETYPE_SONAME,
                                  builtWith: "\(FREETYPE_MAJOR).\(FREETYPE_MINOR).\(FREETYPE_PATCH)") { library in
                typealias Init = @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Int32
                typealias Version = @convention(c) (OpaquePointer?, UnsafeMutablePointer<Int32>?,
                                                    UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?) -> Void
                typealias Done = @convention(c) (OpaquePointer?) -> Int32
                guard let initialise = library.function("FT_Init_FreeType", Init.self),
                      let version = library.function("FT_Library_Version", Version.self),
                      let done = library.function("FT_Done_FreeType", Done.self) else { return nil }
                var handle: OpaquePointer?
                guard initialise(&handle) == 0 else { return nil }
                defer { _ = done(handle) }
                var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
                version(handle, &major, &minor, &patch)
                return "\(major).\(minor).\(patch)"
            },
            SharedLibrary.stringVersion("HarfBuzz", soname: KC_HARFBUZZ_SONAME, function: "hb_version_string",
                                        builtWith: HB_VERSION_STRING),
            SharedLibrary.version("fontconfig", soname: KC_FONTCONFIG_SONAME,
                                  builtWith: "\(FC_MAJOR).\(FC_MINOR).\(FC_REVISION)") { library in
                guard let version = library.function("FcGetVersion", (@convention(c) () -> Int32).self)?() else {
                    return nil
                }
                return "\(version / 10000).\(version / 100 % 100).\(version % 100)"
            },
            SharedLibrary.version("FriBidi", soname: KC_FRIBIDI_SONAME, builtWith: FRIBIDI_VERSION) { library in
                // A variable, not a function: dlsym gives its address.
                typealias Info = UnsafePointer<UnsafePointer<CChar>?>
                guard let info = library.function("fribidi_version_info", Info.self)?.pointee else { return nil }
                let first = String(cString: info).split(separator: "\n").first ?? ""
                return first.split(separator: " ").last.map(String.init)
            },
        ]
    }
}
