#ifndef CRIBCALL_CQRENCODE_SHIM_H
#define CRIBCALL_CQRENCODE_SHIM_H
// libqrencode (Debian: libqrencode-dev). Its API imports into Swift as is; all use is in the QRCode module.
#include <qrencode.h>
#endif
