// SPDX-License-Identifier: Apache-2.0
/// Why text could not be set up. Each case's description is the log line.
public enum TextError: Error, CustomStringConvertible, Equatable {
    /// `FT_Init_FreeType` or `FT_New_Face` failed: the FreeType error code (fterrdef.h) and
    /// the font file, if any.
    case freetype(operation: String, path: String?, code: Int32)
    /// fontconfig could not be initialised or matched no font at all for `family`.
    case noFont(family: String)
    /// FreeType (`libfreetype.so.6`), HarfBuzz (`libharfbuzz.so.0`), fontconfig
    /// (`libfontconfig.so.1`) or FriBidi (`libfribidi.so.0`) could not be opened with dlopen, or
    /// lacks a function: the soname and the loader's reason (dlerror(3)).
    case libraryMissing(soname: String, reason: String)

    public var description: String {
        switch self {
        case .freetype(let operation, let path, let code):
            return "\(operation)\(path.map { " \($0)" } ?? ""): FreeType error \(code)"
        case .noFont(let family):
            return "fontconfig finds no font for \"\(family)\" (install fonts-dejavu-core)"
        case .libraryMissing(let soname, let reason):
            return "\(soname) cannot be loaded: \(reason)"
                + " (install libfreetype6, libharfbuzz0b, libfontconfig1 and libfribidi0)"
        }
    }
}
