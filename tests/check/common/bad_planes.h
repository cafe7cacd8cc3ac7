/* Planes a filter cannot read or write, made from a pair that it can: the
 * cases the engines must refuse before touching a sample (CPU and GPU). */
#pragma once

#include <cudafilters/plane.h>

#include <cstdint>

namespace test {

struct BadPlanes {
  const char *what;
  void (*spoil) (cudafilters::ConstPlane &, cudafilters::Plane &);
};

/* From a 24 x 16 8-bit pair with a stride of at least 64 bytes, in memory
 * of at least twice that many rows' bytes. */
inline constexpr BadPlanes kBadPlanes[] = {
  {"a smaller output", [](cudafilters::ConstPlane &, cudafilters::Plane & d) {
      d.width = 12; d.height = 8; }},
  {"a larger output", [](cudafilters::ConstPlane &, cudafilters::Plane & d) { d.width = 32; }},
  {"16-bit source, 8-bit output", [](cudafilters::ConstPlane & s, cudafilters::Plane &) {
      s.samples = cudafilters::SampleLayout {2, 16, 0}; }},
  {"no source data", [](cudafilters::ConstPlane & s, cudafilters::Plane &) { s.data = nullptr; }},
  {"no output data", [](cudafilters::ConstPlane &, cudafilters::Plane & d) { d.data = nullptr; }},
  {"no columns", [](cudafilters::ConstPlane & s, cudafilters::Plane & d) {
      s.width = d.width = 0; }},
  {"no rows", [](cudafilters::ConstPlane & s, cudafilters::Plane & d) {
      s.height = d.height = 0; }},
  {"a negative width", [](cudafilters::ConstPlane & s, cudafilters::Plane & d) {
      s.width = d.width = -4; }},
  {"rows longer than the stride", [](cudafilters::ConstPlane & s, cudafilters::Plane & d) {
      s.stride = d.stride = 16; }},
  {"one-byte samples of 6 bits", [](cudafilters::ConstPlane & s, cudafilters::Plane & d) {
      s.samples = d.samples = cudafilters::SampleLayout {1, 6, 0}; }},
  {"an invalid layout", [](cudafilters::ConstPlane & s, cudafilters::Plane & d) {
      s.samples = d.samples = cudafilters::SampleLayout {2, 20, 0}; }},
  {"the output over the source", [](cudafilters::ConstPlane & s, cudafilters::Plane & d) {
      d.data = const_cast < uint8_t * >(s.data) + 2; }},
};

}  // namespace test
