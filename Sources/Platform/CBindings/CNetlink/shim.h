// The kernel's rtnetlink interface (linux/netlink.h, linux/rtnetlink.h from Debian's linux-libc-dev): the structs,
// the message types and groups, and the alignment macros as functions. Owned by the NetworkWatch adapter.
#ifndef CNETLINK_SHIM_H
#define CNETLINK_SHIM_H

#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

static const unsigned int cnetlink_groups_link_and_routes = RTMGRP_LINK | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;

static inline unsigned int cnetlink_align(unsigned int length) { return NLMSG_ALIGN(length); }
static inline unsigned int cnetlink_rta_align(unsigned int length) { return RTA_ALIGN(length); }
static inline unsigned int cnetlink_header_length(void) { return NLMSG_HDRLEN; }

#endif
