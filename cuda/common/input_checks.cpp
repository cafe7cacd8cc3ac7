#include "input_checks.h"

#include <stdexcept>
#include <string>

namespace cudafilters {

void check_params(const std::string &error) {
  if (!error.empty()) throw std::invalid_argument(error);
}

void check_plane(ConstPlane p, const char *what) {
  const auto refuse = [what](const std::string &why) {
    throw std::invalid_argument(std::string(what) + " plane: " + why);
  };
  if (!p.samples.valid() || (!p.samples.deep() && p.samples != SampleLayout{}))
    refuse("invalid sample layout (" + std::to_string(p.samples.bytes) + " bytes, " +
           std::to_string(p.samples.bits) + " bits from bit " + std::to_string(p.samples.shift) +
           ")");
  if (p.width < 1 || p.height < 1)
    refuse(std::to_string(p.width) + " x " + std::to_string(p.height) + " samples");
  if (p.data == nullptr) refuse("no data");
  if (p.stride < p.row_bytes())
    refuse("stride " + std::to_string(p.stride) + " is shorter than a row of " +
           std::to_string(p.row_bytes()) + " bytes");
}

void check_plane_pair(ConstPlane src, ConstPlane dst) {
  check_plane(src, "source");
  check_plane(dst, "output");
  if (src.samples != dst.samples || src.width != dst.width || src.height != dst.height)
    throw std::invalid_argument("source and output planes differ in size or layout");
}

void check_planes_apart(ConstPlane src, ConstPlane dst) {
  check_plane_pair(src, dst);
  if (planes_overlap(src, dst))
    throw std::invalid_argument("the output plane overlaps the source: this filter is not run in place");
}

void check_pointwise_planes(ConstPlane src, ConstPlane dst) {
  check_plane_pair(src, dst);
  if (planes_overlap(src, dst) && (src.data != dst.data || src.stride != dst.stride))
    throw std::invalid_argument("the output plane overlaps the source without being it");
}

bool planes_overlap(ConstPlane a, ConstPlane b) {
  if (plane_is_empty(a) || plane_is_empty(b)) return false;
  return a.data <= plane_last_byte(b) && b.data <= plane_last_byte(a);
}

}  // namespace cudafilters
