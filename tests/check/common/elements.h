/* Every element, with settings quick enough for thousands of frames, and
 * what its luma must be (the independent references): for the tests that
 * run all four alike, on this build's backend (kBackend). All take 8- to
 * 16-bit formats. */
#pragma once

#include "equalize_reference.h"
#include "nlm_reference.h"
#include "sharpen_reference.h"

namespace test {

struct ElementCase {
  const char *factory;
  const char *props;
};

static const ElementCase kElements[] = {
  {"cudahisteq", ""},
  {"cudanlm", " auto-strength=false strength=15 patch-size=3 search-size=7 chroma-strength=0"},
  {"cudaclahe", " clip-limit=3 tiles-x=5 tiles-y=3"},
  {"cudasharpen", " amount=1.5 radius=1.2 threshold=2"},
};

static const NlmSettings kNlmCase = { 15, 3, 7, 0, false };
static const SharpenSettings kSharpenCase = { "unsharp", 1.5, 1.2, 2 };

inline std::string
launch_of (const ElementCase & e)
{
  return on_backend (e.factory, e.props);
}

/* What the element must output as luma: the independent references. */
inline void
assert_luma_filtered (const ElementCase & e, const Image & got,
    const Image & in, const char *what)
{
  if (g_str_equal (e.factory, "cudahisteq"))
    assert_images_equal (got, reference_equalize (in), what);
  else if (g_str_equal (e.factory, "cudaclahe"))
    assert_images_equal (got, reference_clahe (in, 3.0, 5, 3), what);
  else if (g_str_equal (e.factory, "cudasharpen"))
    assert_images_equal (got, reference_sharpen (in, kSharpenCase), what);
  else
    assert_images_close (got, reference_nlm (in, kNlmCase), 1, what);
}

}  // namespace test
