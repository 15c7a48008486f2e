// SPDX-License-Identifier: Apache-2.0
#ifndef KC_MQTT_H
#define KC_MQTT_H
// libmosquitto, opened with dlopen when `--mqtt` is given instead of linked: linked, every start
// would load it and libssl with it, MQTT or not (as libcurl, kc_curl.h). The .deb depends on
// libmosquitto1 by name, since dpkg-shlibdeps cannot see it.
//
// kc_mqtt_load() returns a table of the libmosquitto functions used, each field typed as
// libmosquitto's own declaration in <mosquitto.h> (__typeof__), so a signature cannot drift
// from the header the project builds against; see mosquitto.h's comments for each.
#include <mosquitto.h>

/// The soname opened: libmosquitto's ABI 1, which Debian 12's libmosquitto1 (2.0.11) provides.
#define KC_MQTT_SONAME "libmosquitto.so.1"

#define KC_MQTT_FUNCTIONS(X) \
    X(mosquitto_lib_version) X(mosquitto_lib_init) X(mosquitto_new) X(mosquitto_destroy) X(mosquitto_user_data_set) \
    X(mosquitto_strerror) X(mosquitto_reason_string) X(mosquitto_connack_string) \
    X(mosquitto_int_option) X(mosquitto_username_pw_set) X(mosquitto_will_set) \
    X(mosquitto_tls_set) X(mosquitto_max_inflight_messages_set) \
    X(mosquitto_connect_bind_v5) X(mosquitto_reconnect) X(mosquitto_disconnect) \
    X(mosquitto_publish) X(mosquitto_subscribe) \
    X(mosquitto_loop_read) X(mosquitto_loop_write) X(mosquitto_loop_misc) \
    X(mosquitto_socket) X(mosquitto_want_write) \
    X(mosquitto_connect_v5_callback_set) X(mosquitto_disconnect_v5_callback_set) \
    X(mosquitto_publish_v5_callback_set) X(mosquitto_message_v5_callback_set) \
    X(mosquitto_log_callback_set) \
    X(mosquitto_property_add_int32) X(mosquitto_property_free_all)

/// The functions of libmosquitto KioskMQTT calls, never NULL once loaded.
struct kc_mqtt_api {
#define KC_MQTT_FIELD(name) __typeof__(&name) _Nonnull name;
    KC_MQTT_FUNCTIONS(KC_MQTT_FIELD)
#undef KC_MQTT_FIELD
};

/// Opens libmosquitto, looks up every function and calls mosquitto_lib_init, once per process
/// (thread-safe): the table (static, valid for the life of the process), or NULL when the
/// library or a symbol is missing or the initialisation fails (then kc_mqtt_load_error() says
/// why).
const struct kc_mqtt_api *_Nullable kc_mqtt_load(void);
/// Why libmosquitto could not be loaded (dlerror's text, the missing symbol, the failed
/// initialisation), NULL when it was. The string is static.
const char *_Nullable kc_mqtt_load_error(void);

#endif
