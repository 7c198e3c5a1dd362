/* kestrel/kestrel.h — the umbrella header: the core runtime plus every module this build contains.
 *
 * kestrel/config.h (generated) says which modules are in the library (KES_HAVE_DVPP, ...); apps that
 * need one module can include just its header instead.
 */
#ifndef KESTREL_KESTREL_H
#define KESTREL_KESTREL_H

#include "kestrel/config.h"
#include "kestrel/sdk.h"

#if KES_HAVE_DVPP
#include "kestrel/dvpp.h"
#include "kestrel/dvpp_video.h"
#include "kestrel/osd.h"
#include "kestrel/warp.h"
#endif
#if KES_HAVE_AIPP
#include "kestrel/aipp.h"
#endif
#if KES_HAVE_ENGINE
#include "kestrel/convert.h"
#include "kestrel/detect.h"
#include "kestrel/engine.h"
#include "kestrel/track.h"
#endif
#if KES_HAVE_FV
#include "kestrel/fv.h"
#endif

#endif /* KESTREL_KESTREL_H */
