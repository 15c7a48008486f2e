// SPDX-License-Identifier: Apache-2.0
#ifndef KC_CEC_H
#define KC_CEC_H
// The kernel's HDMI-CEC API (<linux/cec.h>, Documentation/userspace-api/media/cec) for
// KioskDisplay's CECClient: the ioctls it makes, as cec-ctl (v4l-utils) makes them, each a
// function returning 0 or -1 with errno set. The messages themselves are built in Swift
// (CECMessage.swift); here only the structures are filled and read.

/// Constants from <linux/cec.h>.
enum {
    /// The adapter's capabilities (struct cec_caps.capabilities).
    kc_CEC_CAP_PHYS_ADDR = 1 << 0,
    kc_CEC_CAP_LOG_ADDRS = 1 << 1,
    kc_CEC_CAP_TRANSMIT = 1 << 2,
    kc_CEC_CAP_CONNECTOR_INFO = 1 << 8,
    /// struct cec_msg.tx_status bits.
    kc_CEC_TX_STATUS_OK = 1 << 0,
    kc_CEC_TX_STATUS_ARB_LOST = 1 << 1,
    kc_CEC_TX_STATUS_NACK = 1 << 2,
    kc_CEC_TX_STATUS_LOW_DRIVE = 1 << 3,
    kc_CEC_TX_STATUS_ERROR = 1 << 4,
    kc_CEC_TX_STATUS_MAX_RETRIES = 1 << 5,
    kc_CEC_TX_STATUS_ABORTED = 1 << 6,
    kc_CEC_TX_STATUS_TIMEOUT = 1 << 7,
    /// No logical address (struct cec_log_addrs.log_addr[i] before a claim).
    kc_CEC_LOG_ADDR_INVALID = 0xff,
    /// No physical address (f.f.f.f: no HDMI connection, or the TV's EDID not read).
    kc_CEC_PHYS_ADDR_INVALID = 0xffff,
    /// struct cec_connector_info.type: DRM (card and connector id follow).
    kc_CEC_CONNECTOR_TYPE_DRM = 1,
};

/// CEC_ADAP_G_CAPS: the driver's and the adapter's names (NUL-terminated, 32 bytes each) and
/// the capability bits.
int kc_cec_caps(int fd, char *driver, char *name, unsigned int *capabilities);

/// CEC_S_MODE CEC_MODE_INITIATOR | CEC_MODE_NO_FOLLOWER: this descriptor may transmit (shared
/// with other initiators); with no follower, the kernel answers the core messages (Give Physical
/// Address, Get CEC Version, Give OSD Name ...) itself.
int kc_cec_become_initiator(int fd);

/// CEC_ADAP_G_PHYS_ADDR.
int kc_cec_phys_addr(int fd, unsigned short *phys_addr);

/// CEC_ADAP_G_LOG_ADDRS: how many logical addresses are configured (`count`) and the first
/// one (kc_CEC_LOG_ADDR_INVALID while a claim is still under way).
int kc_cec_log_addrs(int fd, unsigned int *count, unsigned char *first);

/// CEC_ADAP_S_LOG_ADDRS for one playback device (CEC 1.4, no vendor id, OSD name `osd_name`,
/// at most 14 bytes; CEC_LOG_ADDRS_FL_ALLOW_UNREG_FALLBACK: the unregistered address 15 when no
/// playback address is free). On a blocking descriptor it returns once the address is claimed,
/// or at once when the adapter has no physical address (the kernel claims one when it gets one).
/// `first` gets the logical address claimed (kc_CEC_LOG_ADDR_INVALID: not yet).
int kc_cec_claim_playback(int fd, const char *osd_name, unsigned char *first);

/// CEC_TRANSMIT of `len` bytes (1 ... 16: header, opcode, operands), no reply awaited; on a
/// blocking descriptor it returns once the message is sent or given up. `tx_status` gets the
/// result bits (kc_CEC_TX_STATUS_*). -1 with errno: ENONET (no logical address), ENODEV (the
/// adapter is gone), EINVAL (a bad message).
int kc_cec_transmit(int fd, const unsigned char *msg, unsigned int len, unsigned char *tx_status);

/// CEC_ADAP_G_CONNECTOR_INFO (Linux 5.10): `type` (0 none, kc_CEC_CONNECTOR_TYPE_DRM) and for DRM
/// the card number and the connector's object id.
int kc_cec_connector(int fd, unsigned int *type, unsigned int *card, unsigned int *connector);

#endif
