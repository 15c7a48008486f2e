// SPDX-License-Identifier: Apache-2.0
internal import CKioskMQTT
import KioskSystem

/// libmosquitto for `--version` (the show opens it when `--mqtt` is given, MQTTClient.swift):
/// opened here to ask mosquitto_lib_version (mosquitto.h), the headers' version being
/// LIBMOSQUITTO_MAJOR.MINOR.REVISION.
public enum MosquittoVersion {
    public static var version: LibraryVersion {
        let headers = "\(LIBMOSQUITTO_MAJOR).\(LIBMOSQUITTO_MINOR).\(LIBMOSQUITTO_REVISION)"
        return SharedLibrary.version("libmosquitto", soname: KC_MQTT_SONAME, builtWith: headers) { library in
            library.function("mosquitto_lib_version",
                             (@convention(c) (UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?,
                                              UnsafeMutablePointer<Int32>?) -> Int32).self).map { call in
                var major: Int32 = 0, minor: Int32 = 0, revision: Int32 = 0
                _ = call(&major, &minor, &revision)
                return "\(major).\(minor).\(revision)"
            }
        }
    }
}
