/* buildid.h — the host tests' stand-in for build/gen/buildid.h, which the
 * kernel build generates from a hash of its sources. */
#ifndef TEST_UNIT_BUILDID_H
#define TEST_UNIT_BUILDID_H
#define BT_BUILD_ID 0x0123456789abcdefull
#endif
