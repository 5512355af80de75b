/*
 * pairing_agent: runs inside the real-stack guest in place of bluetoothd's agent.
 *
 * The kernel's SMP asks user space to confirm even a Just Works pairing (mgmt event User
 * Confirmation Request, 0x000F); without an answer the pairing times out. This program opens the
 * Bluetooth management channel and accepts every such request (User Confirmation Reply, 0x001C),
 * logging one line per event it cares about. It needs CAP_NET_ADMIN (the guest runs it as root).
 *
 *   pairing_agent          (runs until killed)
 *
 * Built by the harness: gcc -O2 -Wall -o pairing_agent pairing_agent.c (no libraries).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_BLUETOOTH
#define AF_BLUETOOTH 31
#endif
#define BTPROTO_HCI 1
#define HCI_CHANNEL_CONTROL 3
#define MGMT_INDEX_NONE 0xffff

#define MGMT_OP_READ_VERSION 0x0001
#define MGMT_OP_USER_CONFIRM_REPLY 0x001C
#define MGMT_EV_NEW_LONG_TERM_KEY 0x000A
#define MGMT_EV_USER_CONFIRM_REQUEST 0x000F
#define MGMT_EV_AUTH_FAILED 0x0011

struct hci_address { sa_family_t family; uint16_t device; uint16_t channel; };

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static int send_command(int sock, uint16_t opcode, uint16_t index, const uint8_t *params, uint16_t length) {
    uint8_t frame[6 + 64];
    if (length > 64) return -1;
    frame[0] = opcode & 0xff; frame[1] = opcode >> 8;
    frame[2] = index & 0xff;  frame[3] = index >> 8;
    frame[4] = length & 0xff; frame[5] = length >> 8;
    memcpy(frame + 6, params, length);
    return write(sock, frame, 6u + length) == 6 + length ? 0 : -1;
}

static void format_address(const uint8_t *a, char out[18]) {   /* mgmt addresses are little-endian */
    snprintf(out, 18, "%02X:%02X:%02X:%02X:%02X:%02X", a[5], a[4], a[3], a[2], a[1], a[0]);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    int sock = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (sock < 0) { fprintf(stderr, "pairing_agent: no Bluetooth socket: %s\n", strerror(errno)); return 1; }
    struct hci_address address = { AF_BLUETOOTH, MGMT_INDEX_NONE, HCI_CHANNEL_CONTROL };
    if (bind(sock, (struct sockaddr *)&address, sizeof address) < 0) {
        fprintf(stderr, "pairing_agent: cannot bind the management channel: %s\n", strerror(errno));
        return 1;
    }
    if (send_command(sock, MGMT_OP_READ_VERSION, MGMT_INDEX_NONE, NULL, 0) < 0) {
        fprintf(stderr, "pairing_agent: management channel write failed: %s\n", strerror(errno));
        return 1;
    }
    printf("pairing_agent: listening on the management channel\n");

    uint8_t event[1024];
    char peer[18];
    for (;;) {
        ssize_t n = read(sock, event, sizeof event);
        if (n < 0 && errno == EINTR) continue;
        if (n < 6) { fprintf(stderr, "pairing_agent: management channel closed: %s\n", strerror(errno)); return 1; }
        uint16_t code = le16(event), index = le16(event + 2);
        const uint8_t *params = event + 6;
        size_t length = (size_t)n - 6;
        switch (code) {
        case MGMT_EV_USER_CONFIRM_REQUEST:            /* addr[6] type[1] confirm_hint[1] value[4] */
            if (length < 12) break;
            format_address(params, peer);
            printf("pairing_agent: hci%u confirm %s (type %u, just-works hint %u, value %06u): accepted\n",
                   index, peer, params[6], params[7],
                   (unsigned)(params[8] | params[9] << 8 | params[10] << 16 | (uint32_t)params[11] << 24));
            if (send_command(sock, MGMT_OP_USER_CONFIRM_REPLY, index, params, 7) < 0)
                fprintf(stderr, "pairing_agent: reply failed: %s\n", strerror(errno));
            break;
        case MGMT_EV_NEW_LONG_TERM_KEY:                /* store_hint[1] addr[6] type[1] ... */
            if (length < 8) break;
            format_address(params + 1, peer);
            printf("pairing_agent: hci%u new long-term key for %s (store hint %u)\n", index, peer, params[0]);
            break;
        case MGMT_EV_AUTH_FAILED:                      /* addr[6] type[1] status[1] */
            if (length < 8) break;
            format_address(params, peer);
            printf("pairing_agent: hci%u authentication with %s failed, status 0x%02x\n", index, peer, params[7]);
            break;
        default:
            break;
        }
    }
}
