// MIG geometry: which sets of GPU-instance profiles fit on one GPU, and where. A GPU has memory
// slots (8 on the 7-GI parts) and compute slots (7); an instance takes a contiguous range of
// memory slots starting at one of its profile's allowed start slots, and instances may not
// overlap. Whether a multiset fits is a packing question: like mig-parted, we try every distinct
// creation order, placing each instance at the first free allowed start slot (what the driver
// does), and keep the first order that places them all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/device.hpp"
#include "sim/result.hpp"
#include "sim/world.hpp"

namespace capsim {

// Profile indices into GpuModelInfo::mig_profiles, one entry per instance.
using ProfileMultiset = std::vector<std::uint16_t>;

// Places `profiles` on an empty GPU of `model`. Errors say why it cannot fit: too many compute
// or memory slices, more instances of a profile than it allows, or no creation order that fits.
Result<GpuLayout> place_profiles(const GpuModelInfo& model, ProfileMultiset profiles);

// Places `profiles` into the free slots of `base` (existing instances stay where they are), in
// the first creation order that fits. Used by reconfiguration, which keeps busy instances.
Result<GpuLayout> place_into(const GpuModelInfo& model, const GpuLayout& base,
                             ProfileMultiset profiles);

// Every maximal multiset (no further instance of any considered profile fits), sorted; media
// extension (+me) profiles are left out unless `include_media_extensions`.
std::vector<ProfileMultiset> maximal_layouts(const GpuModelInfo& model,
                                             bool include_media_extensions);

// Compute slices the multiset uses.
std::int32_t compute_slices(const GpuModelInfo& model, const ProfileMultiset& profiles);

// "4g.40gb + 3g.40gb" or "2x 1g.10gb + 2g.20gb", largest profile first.
std::string describe(const GpuModelInfo& model, const ProfileMultiset& profiles);

}  // namespace capsim
