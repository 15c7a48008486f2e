// SPDX-License-Identifier: Apache-2.0
#include "kc_cec.h"
#include <linux/cec.h>
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

int kc_cec_caps(int fd, char *driver, char *name, unsigned int *capabilities) {
    struct cec_caps caps;
    memset(&caps, 0, sizeof caps);
    if (ioctl(fd, CEC_ADAP_G_CAPS, &caps) < 0) return -1;
    memcpy(driver, caps.driver, sizeof caps.driver);
    driver[sizeof caps.driver - 1] = 0;
    memcpy(name, caps.name, sizeof caps.name);
    name[sizeof caps.name - 1] = 0;
    *capabilities = caps.capabilities;
    return 0;
}

int kc_cec_become_initiator(int fd) {
    __u32 mode = CEC_MODE_INITIATOR | CEC_MODE_NO_FOLLOWER;
    return ioctl(fd, CEC_S_MODE, &mode);
}

int kc_cec_phys_addr(int fd, unsigned short *phys_addr) {
    __u16 pa = CEC_PHYS_ADDR_INVALID;
    if (ioctl(fd, CEC_ADAP_G_PHYS_ADDR, &pa) < 0) return -1;
    *phys_addr = pa;
    return 0;
}

int kc_cec_log_addrs(int fd, unsigned int *count, unsigned char *first) {
    struct cec_log_addrs la;
    memset(&la, 0, sizeof la);
    if (ioctl(fd, CEC_ADAP_G_LOG_ADDRS, &la) < 0) return -1;
    *count = la.num_log_addrs;
    *first = la.num_log_addrs > 0 ? la.log_addr[0] : CEC_LOG_ADDR_INVALID;
    return 0;
}

int kc_cec_claim_playback(int fd, const char *osd_name, unsigned char *first) {
    struct cec_log_addrs la;
    memset(&la, 0, sizeof la);
    la.cec_version = CEC_OP_CEC_VERSION_1_4;
    la.vendor_id = CEC_VENDOR_ID_NONE;
    la.flags = CEC_LOG_ADDRS_FL_ALLOW_UNREG_FALLBACK;
    strncpy(la.osd_name, osd_name, sizeof la.osd_name - 1);
    la.num_log_addrs = 1;
    la.log_addr_type[0] = CEC_LOG_ADDR_TYPE_PLAYBACK;
    la.primary_device_type[0] = CEC_OP_PRIM_DEVTYPE_PLAYBACK;
    la.all_device_types[0] = CEC_OP_ALL_DEVTYPE_PLAYBACK;
    if (ioctl(fd, CEC_ADAP_S_LOG_ADDRS, &la) < 0) return -1;
    *first = la.num_log_addrs > 0 ? la.log_addr[0] : CEC_LOG_ADDR_INVALID;
    return 0;
}

int kc_cec_transmit(int fd, const unsigned char *msg, unsigned int len, unsigned char *tx_status) {
    struct cec_msg m;
    memset(&m, 0, sizeof m);
    if (len < 1 || len > CEC_MAX_MSG_SIZE) { *tx_status = 0; errno = EINVAL; return -1; }
    memcpy(m.msg, msg, len);
    m.len = len;
    if (ioctl(fd, CEC_TRANSMIT, &m) < 0) return -1;
    *tx_status = m.tx_status;
    return 0;
}

int kc_cec_connector(int fd, unsigned int *type, unsigned int *card, unsigned int *connector) {
    struct cec_connector_info info;
    memset(&info, 0, sizeof info);
    if (ioctl(fd, CEC_ADAP_G_CONNECTOR_INFO, &info) < 0) return -1;
    *type = info.type;
    *card = info.type == CEC_CONNECTOR_TYPE_DRM ? info.drm.card_no : 0;
    *connector = info.type == CEC_CONNECTOR_TYPE_DRM ? info.drm.connector_id : 0;
    return 0;
}
