// SPDX-License-Identifier: Apache-2.0
// libmosquitto (Debian: libmosquitto-dev, runtime libmosquitto1): the MQTT client behind
// KioskMQTT (MQTT 5 and 3.1.1, TLS through OpenSSL). Opened with dlopen by CKioskMQTT.
#include <mosquitto.h>
#include <mqtt_protocol.h>
