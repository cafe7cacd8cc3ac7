#include "frame_window.h"

#include <algorithm>
#include <stdexcept>

namespace cudafilters {

void FrameWindow::reset(int radius) {
  if (radius < 0 || radius > kMaxRadius)
    throw std::invalid_argument("FrameWindow: radius out of range");
  radius_ = radius;
  held_.clear();
  next_ = 0;
  free_.clear();
  for (int s = slot_count() - 1; s >= 0; --s) free_.push_back(s);
}

int FrameWindow::push() {
  // At most the next frame's r predecessors, itself and its r successors
  // are held; a push beyond that would mean pop() was not called.
  if (free_.empty()) throw std::logic_error("FrameWindow: every slot is in use");
  const int slot = free_.back();
  free_.pop_back();
  held_.push_back(slot);
  return slot;
}

void FrameWindow::drop_newest() {
  if (!waiting()) throw std::logic_error("FrameWindow: no frame waits to be dropped");
  free_.push_back(held_.back());
  held_.pop_back();
}

bool FrameWindow::ready(bool draining) const {
  return waiting() && (draining || next_ + radius_ < int(held_.size()));
}

FrameWindow::Window FrameWindow::next() const {
  if (!waiting()) throw std::logic_error("FrameWindow: no frame waits to be filtered");
  Window w;
  const int first = std::max(0, next_ - radius_);
  const int last = std::min(int(held_.size()) - 1, next_ + radius_);
  for (int i = first; i <= last; ++i) w.slots[w.count++] = held_[i];
  w.center = next_ - first;
  return w;
}

void FrameWindow::pop() {
  if (!waiting()) throw std::logic_error("FrameWindow: no frame waits to be filtered");
  ++next_;
  while (next_ - radius_ > 0) {
    free_.push_back(held_.front());
    held_.pop_front();
    --next_;
  }
}

}  // namespace cudafilters
