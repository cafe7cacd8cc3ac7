#include "gstcudafiltersenvironment.h"

#include <cstring>

#ifdef CUDAFILTERS_TEST_SWITCHES
namespace {

bool
flag (const gchar * name)
{
  const gchar *v = g_getenv (name);
  return v != nullptr && v[0] != '\0' && v[0] != '0';
}

}  // namespace
#endif

GstCudaFiltersEnvironment
GstCudaFiltersEnvironment::read ()
{
  GstCudaFiltersEnvironment e;
  const gchar *wait = g_getenv ("CUDAFILTERS_HOST_WAIT");
  if (wait && std::strcmp (wait, "poll") == 0)
    e.runners.host_wait = cudafilters::HostWait::poll;
  else if (wait && std::strcmp (wait, "block") == 0)
    e.runners.host_wait = cudafilters::HostWait::block;
#ifdef CUDAFILTERS_TEST_SWITCHES
  e.runners.poison_outputs = flag ("CUDAFILTERS_POISON_OUTPUT");
  e.host_sync = flag ("CUDAFILTERS_HOST_SYNC");
  e.other_device_for_tests = flag ("CUDAFILTERS_TEST_OTHER_DEVICE");
#endif
  return e;
}

size_t
GstCudaFiltersEnvironment::host_registry_bytes (size_t otherwise)
{
  const gchar *v = g_getenv ("CUDAFILTERS_HOST_REGISTRY_BYTES");
  if (!v || !*v)
    return otherwise;
  gchar *end = nullptr;
  const guint64 bytes = g_ascii_strtoull (v, &end, 10);
  return *end == '\0' ? size_t (bytes) : otherwise;
}
