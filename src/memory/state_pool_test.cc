// The state slots a running request holds, as SGLang v0.5.18 resolves the
// strategy and counts them (memory/state_pool.h); the pool's sizes are
// worked by hand in memory_model_test.cc.

#include "memory/state_pool.h"

#include <gtest/gtest.h>

namespace ppsearch::memory {
namespace {

SlotRuleInputs Defaults(int pp) {
  SlotRuleInputs in;
  in.pp = pp;
  return in;
}

TEST(SlotRule, WithTheRadixCacheOffARequestHoldsOneSlot) {
  SlotRuleInputs in = Defaults(8);
  in.radix_cache = false;
  in.strategy = "extra_buffer";
  EXPECT_EQ(ResolveSlotRule(in).slots_per_request, 1);
}

TEST(SlotRule, AutoPicksTheExtraBufferAndPpTurnsTheOverlapOffAfterwards) {
  // One stage: the overlap scheduler stays on, 3 + 2 ping-pong slots.
  const SlotRule one = ResolveSlotRule(Defaults(1));
  EXPECT_EQ(one.strategy, "extra_buffer");
  EXPECT_EQ(one.slots_per_request, 5);
  // PP: the strategy was chosen with the overlap still wanted; PP then turns
  // it off, so the ping-pong is one slot (the 26 slots of SGLang PR #33666's
  // report served 26 // 4 = 6 requests).
  const SlotRule pp = ResolveSlotRule(Defaults(8));
  EXPECT_EQ(pp.strategy, "extra_buffer");
  EXPECT_EQ(pp.slots_per_request, 4);
  EXPECT_TRUE(pp.refusal.empty());
}

TEST(SlotRule, APdDecodeServerHoldsTheLiveStateAndThePingPong) {
  // HybridMambaDecodeReqToTokenPool: 1 + the ping-pong where the extra
  // buffer is on (2 with the overlap scheduler, 1 under PP), else 1.
  EXPECT_EQ(ResolveSlotRule(Defaults(1)).decode_slots_per_request, 3);
  EXPECT_EQ(ResolveSlotRule(Defaults(8)).decode_slots_per_request, 2);
  SlotRuleInputs no_buffer = Defaults(1);
  no_buffer.strategy = "no_buffer";
  no_buffer.overlap_disabled_by_user = true;
  EXPECT_EQ(ResolveSlotRule(no_buffer).decode_slots_per_request, 1);
  SlotRuleInputs lazy = Defaults(1);
  lazy.strategy = "extra_buffer_lazy";
  EXPECT_EQ(ResolveSlotRule(lazy).slots_per_request, 4);         // lazy saves a slot here...
  EXPECT_EQ(ResolveSlotRule(lazy).decode_slots_per_request, 3);  // ...not on a decode server
  SlotRuleInputs off = Defaults(1);
  off.radix_cache = false;
  EXPECT_EQ(ResolveSlotRule(off).decode_slots_per_request, 1);
}

TEST(SlotRule, ThePdServersOf0517RefuseTheLazyBuffer) {
  SlotRuleInputs lazy = Defaults(1);
  lazy.strategy = "extra_buffer_lazy";
  EXPECT_TRUE(ResolveSlotRule(lazy).refusal.empty());
  lazy.pd_refuses_lazy = true;
  EXPECT_EQ(ResolveSlotRule(lazy).refusal,
            "extra_buffer_lazy unsupported under PD disaggregation; use "
            "--mamba-radix-cache-strategy extra_buffer.");
  SlotRuleInputs extra = Defaults(1);
  extra.pd_refuses_lazy = true;
  EXPECT_TRUE(ResolveSlotRule(extra).refusal.empty());  // auto: the extra buffer
}

TEST(SlotRule, SkippingTheDecodeLockTakesASlotOffTheBase) {
  // SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK: 2 + the ping-pong (2 at PP1, 1 under
  // PP); no_buffer keeps 3; with the radix cache off a request holds 1.
  SlotRuleInputs one = Defaults(1);
  one.skip_decode_lock = true;
  EXPECT_EQ(ResolveSlotRule(one).slots_per_request, 4);
  SlotRuleInputs pp = Defaults(8);
  pp.skip_decode_lock = true;
  EXPECT_EQ(ResolveSlotRule(pp).slots_per_request, 3);
  EXPECT_EQ(ResolveSlotRule(pp).decode_slots_per_request, 2);  // the decode pool is unmoved
  SlotRuleInputs no_buffer = pp;
  no_buffer.strategy = "no_buffer";
  no_buffer.overlap_disabled_by_user = true;
  EXPECT_EQ(ResolveSlotRule(no_buffer).slots_per_request, 3);
  SlotRuleInputs lazy = one;
  lazy.strategy = "extra_buffer_lazy";
  EXPECT_EQ(ResolveSlotRule(lazy).slots_per_request, 3);
  SlotRuleInputs off = one;
  off.radix_cache = false;
  EXPECT_EQ(ResolveSlotRule(off).slots_per_request, 1);
}

TEST(SlotRule, AutoWithoutTheOverlapOrSupportIsNoBuffer) {
  SlotRuleInputs off = Defaults(1);
  off.overlap_disabled_by_user = true;
  EXPECT_EQ(ResolveSlotRule(off).strategy, "no_buffer");
  EXPECT_EQ(ResolveSlotRule(off).slots_per_request, 3);
  // Pages larger than a token still want the buffer.
  off.page_size = 16;
  EXPECT_EQ(ResolveSlotRule(off).strategy, "extra_buffer");
  EXPECT_EQ(ResolveSlotRule(off).slots_per_request, 4);
  SlotRuleInputs unsupported = Defaults(1);
  unsupported.extra_buffer_supported = false;
  EXPECT_EQ(ResolveSlotRule(unsupported).slots_per_request, 3);
}

TEST(SlotRule, WrittenStrategies) {
  SlotRuleInputs in = Defaults(1);
  in.strategy = "no_buffer";
  EXPECT_EQ(ResolveSlotRule(in).slots_per_request, 3);
  in.strategy = "extra_buffer_lazy";
  EXPECT_EQ(ResolveSlotRule(in).slots_per_request, 4);
  EXPECT_TRUE(ResolveSlotRule(in).refusal.empty());
  // The lazy buffer needs the overlap scheduler, which PP turns off.
  in.pp = 2;
  EXPECT_EQ(ResolveSlotRule(in).refusal,
            "Lazy extra buffer requires overlap schedule (--disable-overlap-schedule is "
            "incompatible)");
}

// server_args.py _validate_mamba_no_buffer / _validate_mamba_extra_buffer.
TEST(SlotRule, StrategiesSglangAssertsAgainstAreRefused) {
  SlotRuleInputs in = Defaults(8);
  in.strategy = "no_buffer";  // the overlap scheduler is still on when SGLang checks
  EXPECT_EQ(ResolveSlotRule(in).refusal,
            "no_buffer do not support overlap schedule. Try to set "
            "disable_overlap_schedule=True.");
  in.overlap_disabled_by_user = true;
  EXPECT_TRUE(ResolveSlotRule(in).refusal.empty());
  in.page_size = 16;
  EXPECT_EQ(ResolveSlotRule(in).refusal, "no_buffer only supports page_size=1.");
  SlotRuleInputs unsupported = Defaults(1);
  unsupported.strategy = "extra_buffer";
  unsupported.extra_buffer_supported = false;
  EXPECT_EQ(ResolveSlotRule(unsupported).refusal,
            "extra_buffer is not supported for this model on its linear-attention backend (the "
            "extra buffer needs linear-attn-backend triton); use no_buffer.");
  // auto falls back to no_buffer (and turns the overlap off itself): fine.
  unsupported.strategy = "auto";
  EXPECT_TRUE(ResolveSlotRule(unsupported).refusal.empty());
}

TEST(SizeStatePool, NothingToSizeWithoutState) {
  const StatePoolSize none = SizeStatePool(StatePoolSettings{}, 1000, 0, std::nullopt, 1);
  EXPECT_EQ(none.slots, 0);
  EXPECT_DOUBLE_EQ(none.charged_mib, 0);
  EXPECT_TRUE(none.refusal.empty());
}

TEST(SizeStatePool, TheRatioSplitsTheBudget) {
  // 1900 MiB x 0.9 / 1.9 = 900 MiB for states of 2 MiB: floor((900 - 2) / 2)
  // = 449 slots, 450 x 2 = 900 MiB charged. A ratio of 0.1: 1900 x 0.1 / 1.1
  // = 172.7 MiB -> floor(170.7 / 2) = 85 slots.
  constexpr double kTwoMib = 2.0 * 1024 * 1024;
  const StatePoolSize half = SizeStatePool(StatePoolSettings{}, 1900, kTwoMib, std::nullopt, 1);
  EXPECT_EQ(half.slots, 449);
  EXPECT_DOUBLE_EQ(half.charged_mib, 900);
  StatePoolSettings small;
  small.full_memory_ratio = 0.1;
  EXPECT_EQ(SizeStatePool(small, 1900, kTwoMib, std::nullopt, 1).slots, 85);
}

}  // namespace
}  // namespace ppsearch::memory
