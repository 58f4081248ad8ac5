// usrsctp for Swift. The library is built with INET and INET6; its header needs them defined.
#ifndef BEDRUD_CUSRSCTP_SHIM_H
#define BEDRUD_CUSRSCTP_SHIM_H
#ifndef INET
#define INET 1
#endif
#ifndef INET6
#define INET6 1
#endif
#include <usrsctp.h>
#endif
