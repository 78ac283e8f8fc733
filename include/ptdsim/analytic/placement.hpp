#pragma once
#include "ptdsim/analytic/collectives.hpp"
#include "ptdsim/core/scenario.hpp"

// Rank placement helpers behind group_of (docs/analytic.md "Groups and placement").
namespace ptdsim::analytic {

// Size of a parallel dimension in the scenario.
int dim_size(const core::Scenario& s, core::Dim d);
// Distance between consecutive ranks of a dimension's group: the product of the sizes of the dims
// placed inside it (ep counts as 1: expert-parallel ranks are carved out of the data-parallel ones).
int dim_stride(const core::Scenario& s, core::Dim d);

struct DimStride {
  int size = 1;
  int stride = 1;
};
// A group spanning several dims (listed innermost first), e.g. the dp*cp gradient group.
Group group_from(const core::Scenario& s, const DimStride* dims, int count);

}  // namespace ptdsim::analytic
