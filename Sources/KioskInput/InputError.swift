// SPDX-License-Identifier: Apache-2.0
import KioskSystem

/// Everything that can go wrong in the touch input module. The description is the log line.
public enum InputError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A system or libevdev call failed, with its operation, path and errno
    /// (`open /dev/input/event3: Permission denied (errno 13)`).
    case system(SystemError)
    /// The named device (`--input PATH`) has no position axes a touch could be read from.
    case notATouchscreen(path: String, reason: String)
    /// No device under the directory is a touchscreen; `detail` lists what was tried.
    case noTouchscreen(directory: String, detail: String)
    /// A `--touch-calibration` value that cannot be used: the value as given and why.
    case invalidCalibration(value: String, reason: String)
    /// A `--presence` value that cannot be used (``PresenceSensorSpec``): the value and why.
    case invalidPresence(value: String, reason: String)

    public var description: String {
        switch self {
        case .system(let error):
            let hint = (error.errno == 13 || error.errno == 1) && error.operation == "open"
                ? " (the user needs the group that owns the node, on Debian `input`)" : ""
            return error.description + hint
        case .notATouchscreen(let path, let reason): return "\(path) is not a touchscreen: \(reason)"
        case .noTouchscreen(let directory, let detail):
            return "no touchscreen in \(directory)" + (detail.isEmpty ? "" : " (\(detail))")
        case .invalidCalibration(let value, let reason):
            return "--touch-calibration '\(value)': \(reason); expected six numbers 'a b c d e f' "
                + "(libinput's LIBINPUT_CALIBRATION_MATRIX) or swap-xy, invert-x, invert-y (comma separated)"
        case .invalidPresence(let value, let reason):
            return "--presence '\(value)': \(reason); expected "
                + "gpio:CHIP:LINE[,active-low][,debounce=MS][,pull-up|pull-down|bias-disable]"
        }
    }
}
