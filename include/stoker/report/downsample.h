// stoker/report/downsample.h — a long series reduced to what a plot of a given width can
// show, with its extremes kept: a ten-hour monitor log at 1 Hz is 36,000 points for a plot
// a few hundred pixels wide.
//
// Min/max per bucket: the x range is cut into `buckets` equal spans (one per pixel column);
// each span keeps its lowest and its highest point, in x order (one point when they are the
// same). So a one-sample dip or spike survives, and the output holds at most 2 × buckets
// points. Points whose x or y is NaN are left out (a figure not measured); a series short
// enough already comes back as it is, less those.
//
// Bars (one per epoch) are grouped instead: consecutive bars share one column, each group
// drawn as one bar of their means, so a run of 300,000 epochs draws as many bars as a plot
// has pixel columns, not 300,000.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <vector>

namespace stoker::report {

struct Point {
  double x = 0;
  double y = 0;
};

// `x` ascending (as time and epochs are); `x` and `y` of the same length. buckets >= 1.
std::vector<Point> downsample_min_max(const std::vector<double>& x, const std::vector<double>& y, size_t buckets);

// `bars` consecutive bars cut into at most `buckets` groups of equal size (the last one may be
// smaller), as [begin, end) index ranges in order; each bar alone when they fit. buckets >= 1.
struct BarGroup {
  size_t begin = 0, end = 0;
};
std::vector<BarGroup> bar_groups(size_t bars, size_t buckets);

}  // namespace stoker::report
