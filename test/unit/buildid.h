/* buildid.h — the host tests' stand-in for build/gen/buildid.h, which the
 * kernel build generates from a hash of its sources. */
#ifndef BUILDID_H
#define BUILDID_H
#define BT_BUILD_ID 0x0123456789abcdefull
#endif
