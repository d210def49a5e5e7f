#ifndef ASYNCHARNESS_CLIBXML2_SHIM_H
#define ASYNCHARNESS_CLIBXML2_SHIM_H

#include <libxml/xmlversion.h>
// Debian builds libxml2 with ICU. Importing its ICU-dependent declarations next to
// Foundation (which brings its own ICU module) fails clean builds with "'UErrorCode' has
// different definitions in different modules". Nothing here needs ICU: keep this #undef
// after xmlversion.h and before every other libxml2 header.
#undef LIBXML_ICU_ENABLED

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlreader.h>
#include <libxml/xmlwriter.h>

#endif
