#include "stoker/train/config.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "cli/help_formatter.h"
#include "stoker/core/error.h"
#include "support/error_text.h"
#include "support/temp_dir.h"
#include "train/config/schema.h"

namespace stoker::train {

// For readable failures of EXPECT_EQ on configs.
void PrintTo(const TrainConfig& config, std::ostream* out) { *out << "\n" << to_yaml(config); }

namespace {

using stoker::testing::TempDir;

// Defaults, then the YAML text (if any) as c.yaml, then the flags: what `stoker train` does.
TrainConfig load(const std::optional<std::string>& yaml, const std::string& flags) {
  TempDir dir;
  CLI::App app;
  ConfigFlags config_flags;
  config_flags.add_to(&app);
  const std::string config = yaml ? "--config " + dir.write_text("c.yaml", *yaml) + " " : "";
  app.parse(config + flags, false);
  return resolve_train_config(config_flags);
}

TrainConfig from_yaml(const std::string& yaml) { return load(yaml, ""); }
TrainConfig from_flags(const std::string& flags) { return load(std::nullopt, flags); }

// The message of the UsageError the YAML text gives, with the temp dir cut off the path.
std::string yaml_error(const std::string& yaml) {
  const std::string message = testing::usage_error_text([&] { from_yaml(yaml); });
  const size_t at = message.find("c.yaml:");
  return at == std::string::npos ? message : message.substr(at);
}

TEST(TrainConfigTest, DefaultsAreValidAndListedInSchemaOrder) {
  const TrainConfig config;
  EXPECT_NO_THROW(validate(config));
  const std::vector<ConfigKey>& keys = config_keys();
  ASSERT_EQ(keys.size(), 83u);
  EXPECT_EQ(keys.front().name, "model");
  EXPECT_EQ(keys.back().name, "max_bad_fraction");
  std::set<std::string> names;
  std::string yaml;
  for (const ConfigKey& key : keys) {
    EXPECT_TRUE(names.insert(key.name).second) << key.name;
    EXPECT_FALSE(key.help.empty()) << key.name;
    // The default text is what to_yaml() writes for a default config.
    yaml += key.name + ": " + (key.default_text.empty() ? "\"\"" : key.default_text) + "\n";
  }
  EXPECT_EQ(to_yaml(config), yaml);
  EXPECT_EQ(keys[3].name, "val_split");
  EXPECT_EQ(keys[5].name, "val_transforms");
  EXPECT_EQ(keys[6].name, "auto_augment");
  EXPECT_EQ(keys[6].default_text, "none");
  EXPECT_EQ(keys[8].name, "augmix_severity");
  EXPECT_EQ(keys[10].name, "ra_sampler");
  EXPECT_EQ(keys[11].default_text, "3");  // ra_reps
  EXPECT_EQ(keys[12].name, "interpolation");
  EXPECT_EQ(keys[12].default_text, "bilinear");
  EXPECT_EQ(keys[15].name, "val_crop_size");
  EXPECT_EQ(keys[16].name, "task");
  EXPECT_EQ(keys[17].name, "loss");
  EXPECT_EQ(keys[18].name, "epochs");
  EXPECT_EQ(keys[20].default_text, "0.001");  // lr
  EXPECT_EQ(to_string(config.amp), "off");
  EXPECT_EQ(to_string(config.optimizer), "adamw");
  EXPECT_EQ(to_string(config.schedule), "constant");
  EXPECT_EQ(to_string(config.task), "auto");
  EXPECT_EQ(to_string(config.loss), "auto");
  EXPECT_EQ(to_string(config.cache), "none");
  EXPECT_EQ(from_yaml(""), config);
  EXPECT_EQ(from_yaml("# only a comment\n"), config);
}

TEST(TrainConfigTest, YamlOverridesOnlyTheKeysItGives) {
  const TrainConfig config = from_yaml(
      "model: resnet18\n"
      "epochs: 5   # a comment\n"
      "lr: 3e-4\n"
      "optimizer: SGD\n"
      "nesterov: yes\n"
      "amp: off\n"  // YAML 1.1 would make this a bool; keys are read by their own type
      "schedule: cosine\n"
      "seed: 18446744073709551615\n"
      "max_steps: 10000000000\n"
      "val_data:\n"
      "transforms: 'Resize(256), CenterCrop(224)'\n");
  TrainConfig expected;
  expected.model = "resnet18";
  expected.epochs = 5;
  expected.lr = 3e-4;
  expected.optimizer = OptimizerKind::kSgd;
  expected.nesterov = true;
  expected.schedule = ScheduleKind::kCosine;
  expected.seed = 18446744073709551615u;
  expected.max_steps = 10000000000;
  expected.transforms = "Resize(256), CenterCrop(224)";
  EXPECT_EQ(config, expected);
}

TEST(ConfigFlagsTest, FlagsOverrideTheFileOnlyWhereGiven) {
  const TrainConfig config = load("epochs: 5\nbatch_size: 32\npin_memory: false\n", "--batch-size 8 --lr 0.1");
  EXPECT_EQ(config.epochs, 5);       // file
  EXPECT_EQ(config.batch_size, 8);   // flag over file
  EXPECT_EQ(config.lr, 0.1);         // flag over default
  EXPECT_FALSE(config.pin_memory);   // file, not reset by an absent flag
  EXPECT_EQ(config.num_workers, 2);  // default
  EXPECT_EQ(from_flags(""), TrainConfig{});
}

TEST(ConfigFlagsTest, ResumeStartsFromTheRunsConfigAndFlagsChangeOnlyTheirKeys) {
  TempDir run;
  TrainConfig started;
  started.model = "resnet18";
  started.data = "/data/poses.csv";
  started.epochs = 7;
  started.lr = 0.05;
  started.batch_size = 32;
  started.amp = AmpMode::kBf16;
  run.write_text("config.yaml", to_yaml(started));
  run.write_text("checkpoint.pt", "");
  for (const std::string& resume : {run.str(), run.str() + "/checkpoint.pt"}) {
    const TrainConfig resumed = from_flags("--resume " + resume + " --epochs 9");
    TrainConfig expected = started;
    expected.epochs = 9;
    expected.resume = resume;
    EXPECT_EQ(resumed, expected) << resume;
  }
  // The --config file comes after the run's config, and the flags after both.
  const TrainConfig layered = load("lr: 0.2\nepochs: 3\n", "--resume " + run.str() + " --epochs 4");
  EXPECT_EQ(layered.model, "resnet18");
  EXPECT_EQ(layered.lr, 0.2);
  EXPECT_EQ(layered.epochs, 4);
  // A checkpoint with no config.yaml beside it: the defaults, the file and the flags only.
  TempDir bare;
  bare.write_text("checkpoint.pt", "");
  EXPECT_EQ(from_flags("--resume " + bare.str() + "/checkpoint.pt").model, TrainConfig{}.model);
}

TEST(ConfigFlagsTest, AcceptsBothSpellingsAliasesAndTheLastValue) {
  struct Case {
    const char* flags;
    std::function<void(TrainConfig*)> expect;  // edits a default config
  };
  const std::vector<Case> cases = {
      {"--batch-size 7", [](TrainConfig* c) { c->batch_size = 7; }},
      {"--batch_size=7", [](TrainConfig* c) { c->batch_size = 7; }},
      {"--num-workers 3", [](TrainConfig* c) { c->num_workers = 3; }},
      {"--num_workers 3", [](TrainConfig* c) { c->num_workers = 3; }},
      {"--workers 3", [](TrainConfig* c) { c->num_workers = 3; }},
      {"--workers auto", [](TrainConfig* c) { c->num_workers = kAuto; }},
      {"--norm-weight-decay 0", [](TrainConfig* c) { c->norm_weight_decay = 0; }},
      {"--norm_weight_decay 5e-5", [](TrainConfig* c) { c->norm_weight_decay = 5e-5; }},
      {"--norm-weight-decay auto", [](TrainConfig* c) { c->norm_weight_decay = kAuto; }},
      {"--prefetch-factor 5", [](TrainConfig* c) { c->prefetch_factor = 5; }},
      {"--prefetch 5", [](TrainConfig* c) { c->prefetch_factor = 5; }},
      {"--lr 0.5", [](TrainConfig* c) { c->lr = 0.5; }},
      {"--learning-rate 0.5", [](TrainConfig* c) { c->lr = 0.5; }},
      {"--learning_rate 0.5", [](TrainConfig* c) { c->lr = 0.5; }},
      {"--accumulation_steps 4", [](TrainConfig* c) { c->accumulation_steps = 4; }},
      {"--accumulation-steps 4", [](TrainConfig* c) { c->accumulation_steps = 4; }},
      {"--accum-steps 4", [](TrainConfig* c) { c->accumulation_steps = 4; }},
      {"--amp fp16", [](TrainConfig* c) { c->amp = AmpMode::kFp16; }},
      {"--clip-grad-norm 1.5", [](TrainConfig* c) { c->clip_grad_norm = 1.5; }},
      {"--max_grad_norm 2", [](TrainConfig* c) { c->clip_grad_norm = 2; }},
      {"--early-stopping-patience 3", [](TrainConfig* c) { c->early_stopping_patience = 3; }},
      {"--patience 3", [](TrainConfig* c) { c->early_stopping_patience = 3; }},
      {"--ema-decay 0.999", [](TrainConfig* c) { c->ema_decay = 0.999; }},
      {"--model_ema_decay 0.9998", [](TrainConfig* c) { c->ema_decay = 0.9998; }},
      {"--model-ema-steps 32", [](TrainConfig* c) { c->ema_steps = 32; }},
      {"--mixup-alpha 0.2", [](TrainConfig* c) { c->mixup_alpha = 0.2; }},
      {"--cutmix_alpha 1", [](TrainConfig* c) { c->cutmix_alpha = 1; }},
      {"--auto-augment ta_wide", [](TrainConfig* c) { c->auto_augment = "ta_wide"; }},
      {"--auto_augment ra --ra-magnitude 5",
       [](TrainConfig* c) {
         c->auto_augment = "ra";
         c->ra_magnitude = 5;
       }},
      {"--random-erase 0.25", [](TrainConfig* c) { c->random_erase = 0.25; }},
      {"--use_amp", [](TrainConfig* c) { c->amp = AmpMode::kBf16; }},
      {"--use-amp", [](TrainConfig* c) { c->amp = AmpMode::kBf16; }},
      {"--use-amp=fp16", [](TrainConfig* c) { c->amp = AmpMode::kFp16; }},
      {"--no-pin-memory", [](TrainConfig* c) { c->pin_memory = false; }},
      {"--pin_memory=false", [](TrainConfig* c) { c->pin_memory = false; }},
      {"--no_persistent_workers", [](TrainConfig* c) { c->persistent_workers = false; }},
      {"--no-tensorboard", [](TrainConfig* c) { c->tensorboard = false; }},
      {"--nesterov --optimizer sgd",
       [](TrainConfig* c) {
         c->nesterov = true;
         c->optimizer = OptimizerKind::kSgd;
       }},
      {"--device cuda:1 --output-dir /tmp/r",
       [](TrainConfig* c) {
         c->device = "cuda:1";
         c->output_dir = "/tmp/r";
       }},
      {"--max-steps 20 --seed 7",
       [](TrainConfig* c) {
         c->max_steps = 20;
         c->seed = 7;
       }},
      {"--batch-size 8 --batch_size 16", [](TrainConfig* c) { c->batch_size = 16; }},
      {"--batch_size 16 --batch-size 8", [](TrainConfig* c) { c->batch_size = 8; }},
      {"--amp fp16 --use_amp", [](TrainConfig* c) { c->amp = AmpMode::kBf16; }},
      {"--nproc 4", [](TrainConfig* c) { c->nproc_per_node = 4; }},
      {"--nproc_per_node 2", [](TrainConfig* c) { c->nproc_per_node = 2; }},
  };
  for (const Case& c : cases) {
    TrainConfig expected;
    c.expect(&expected);
    EXPECT_EQ(from_flags(c.flags), expected) << c.flags;
  }
}

TEST(ConfigFlagsTest, HelpShowsOneSpellingWithDefaults) {
  CLI::App app;
  app.formatter(std::make_shared<cli::HelpFormatter>());
  ConfigFlags flags;
  flags.add_to(&app);
  const std::string help = app.help();
  EXPECT_NE(help.find("--batch-size INT=64"), std::string::npos) << help;
  EXPECT_NE(help.find("--pin-memory,--no-pin-memory=true"), std::string::npos) << help;
  EXPECT_NE(help.find("--amp {off,bf16,fp16}=off"), std::string::npos) << help;
  EXPECT_NE(help.find("(also --workers)"), std::string::npos) << help;
  EXPECT_EQ(help.find("--batch_size"), std::string::npos) << help;
  EXPECT_EQ(help.find("--use_amp"), std::string::npos) << help;
}

TEST(ConfigYamlTest, UnknownKeysGetLineNumberAndSuggestion) {
  struct Case {
    const char* yaml;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"epochs: 3\n# workers\nnum_worker: 4\n", "c.yaml:3: unknown key 'num_worker' — did you mean 'num_workers'?"},
      {"batch-size: 4\n", "c.yaml:1: unknown key 'batch-size' — did you mean 'batch_size'?"},
      {"workers: 4\n", "c.yaml:1: unknown key 'workers' — did you mean 'num_workers'?"},
      {"learning_rate: 4\n", "c.yaml:1: unknown key 'learning_rate' — did you mean 'lr'?"},
      {"use_amp: true\n", "c.yaml:1: unknown key 'use_amp' — did you mean 'amp'?"},
      {"colour: red\n", "c.yaml:1: unknown key 'colour' (`stoker train --help` lists the keys)"},
      {"epochs: 3\nlr: 1\nepochs: 4\n", "c.yaml:3: key 'epochs' is given twice (also on line 1); keep one"},
      {"- epochs\n", "c.yaml:1: a config file is 'key: value' lines (got a list)"},
      {"epochs: [1\n", "c.yaml:2: not valid YAML: end of sequence flow not found"},
  };
  for (const Case& c : cases) EXPECT_EQ(yaml_error(c.yaml), c.message) << c.yaml;
}

TEST(ConfigYamlTest, WrongTypesNameTheKeyAndTheValue) {
  struct Case {
    const char* yaml;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"epochs: two\n", "c.yaml:1: key 'epochs' must be an integer (got 'two')"},
      {"epochs: 2.5\n", "c.yaml:1: key 'epochs' must be an integer (got '2.5')"},
      {"epochs:\n", "c.yaml:1: key 'epochs' must be an integer (got nothing)"},
      {"epochs: [1, 2]\n", "c.yaml:1: key 'epochs' must be an integer (got a list)"},
      {"epochs: 99999999999\n",
       "c.yaml:1: key 'epochs' must be an integer from -2147483648 to 2147483647 "
       "(got '99999999999')"},
      {"seed: -1\n", "c.yaml:1: key 'seed' must be an integer from 0 to 18446744073709551615 (got '-1')"},
      {"lr: fast\n", "c.yaml:1: key 'lr' must be a number (got 'fast')"},
      {"lr: inf\n", "c.yaml:1: key 'lr' must be a finite number (got 'inf')"},
      {"pin_memory: maybe\n", "c.yaml:1: key 'pin_memory' must be true or false (got 'maybe')"},
      {"amp: fp32\n", "c.yaml:1: key 'amp' must be one of off, bf16, fp16 (got 'fp32')"},
      {"optimizer: adam\n", "c.yaml:1: key 'optimizer' must be one of adamw, sgd, rmsprop (got 'adam')"},
      {"data: {a: 1}\n", "c.yaml:1: key 'data' must be a string (got a map)"},
  };
  for (const Case& c : cases) EXPECT_EQ(yaml_error(c.yaml), c.message) << c.yaml;

  EXPECT_EQ(testing::usage_error_text([] { from_flags("--epochs two"); }), "--epochs must be an integer (got 'two')");
  EXPECT_EQ(testing::usage_error_text([] { from_flags("--workers x"); }),
            "--workers must be an integer or auto (got 'x')");
  // -1 is how auto is stored; typed, it is an error, not a silent auto.
  EXPECT_EQ(testing::usage_error_text([] { from_flags("--workers -1"); }),
            "--workers must be at least 1, or auto (got '-1')");
  EXPECT_EQ(yaml_error("num_workers: -1\n"), "c.yaml:1: key 'num_workers' must be at least 1, or auto (got '-1')");
  EXPECT_EQ(testing::usage_error_text([] { from_flags("--norm-weight-decay -1"); }),
            "--norm-weight-decay must be a number >= 0, or auto (got '-1')");
  EXPECT_EQ(yaml_error("norm_weight_decay: nope\n"), "c.yaml:1: key 'norm_weight_decay' must be a number (got 'nope')");
  EXPECT_EQ(testing::usage_error_text([] { from_flags("--use-amp=fp32"); }),
            "--use-amp must be one of off, bf16, fp16 (got 'fp32')");
  // torchvision's train.py spells it RMSprop.
  EXPECT_EQ(from_flags("--opt RMSprop").optimizer, OptimizerKind::kRmsprop);
  EXPECT_EQ(testing::usage_error_text([] { from_flags("--opt adam"); }),
            "--opt must be one of adamw, sgd, rmsprop (got 'adam')");
}

// The moving average a run keeps: stoker's own from ema_decay, torchvision's with --model-ema
// (its train.py: adjust = world_size x batch_size x model_ema_steps / epochs; alpha = 1 - decay;
// alpha = min(1, alpha x adjust); decay = 1 - alpha).
TEST(AveragePlanTest, StokersOwnOrTorchvisionsRescaledDecay) {
  TrainConfig c;
  EXPECT_FALSE(average_plan(c, 1, 100).on);
  c.ema_decay = 0.999;
  AveragePlan own = average_plan(c, 4, 100);
  EXPECT_TRUE(own.on);
  EXPECT_EQ(own.decay, 0.999);
  EXPECT_EQ(own.every_steps, 1);
  EXPECT_TRUE(own.ramp);
  EXPECT_EQ(own.copy_until_step, 0);

  // The ResNet-50 v2 recipe: 8 processes of 128, --model-ema, 600 epochs, 5 warmup epochs.
  TrainConfig v2 = from_flags("--model-ema --batch-size 128 --epochs 600 --lr-warmup-epochs 5");
  const AveragePlan tv = average_plan(v2, 8, 1251);
  EXPECT_TRUE(tv.on);
  EXPECT_EQ(tv.every_steps, 32);
  EXPECT_NEAR(tv.decay, 1 - 2e-5 * 8 * 128 * 32 / 600, 1e-14);
  EXPECT_FALSE(tv.ramp);
  EXPECT_EQ(tv.copy_until_step, 5 * 1251);
  // Accumulated batches count as the batch, a given decay and steps replace the defaults, and
  // the rescaled decay stops at 0 (the average is the weights).
  v2.accumulation_steps = 2;
  v2.ema_decay = 0.9999;
  v2.ema_steps = 4;
  EXPECT_NEAR(average_plan(v2, 1, 10).decay, 1 - 1e-4 * 128 * 2 * 4 / 600, 1e-14);
  v2.ema_decay = 0.999;
  v2.epochs = 1;
  EXPECT_EQ(average_plan(v2, 1, 10).decay, 0);
  EXPECT_EQ(to_yaml(from_flags("--model-ema")).find("ema_steps: auto\n") != std::string::npos, true);
}

// torchvision's reference-script preset flags, as its ResNet-50 recipe writes them.
TEST(ConfigFlagsTest, TorchvisionReferenceScriptFlags) {
  const TrainConfig c = from_flags(
      "--train-crop-size 176 --val-resize-size 232 --val_crop_size 224 --interpolation "
      "bicubic");
  EXPECT_EQ(c.train_crop_size, 176);
  EXPECT_EQ(c.val_resize_size, 232);
  EXPECT_EQ(c.val_crop_size, 224);
  EXPECT_EQ(c.interpolation, "bicubic");
  // The recipe's optimiser and schedule flags, by torchvision's names.
  const TrainConfig r = from_flags("--opt sgd --wd 0.00002 --lr-scheduler CosineAnnealingLR --lr-warmup-epochs 5");
  EXPECT_EQ(r.optimizer, OptimizerKind::kSgd);
  EXPECT_EQ(r.weight_decay, 0.00002);
  EXPECT_EQ(r.schedule, ScheduleKind::kCosine);
  EXPECT_EQ(to_string(r.schedule), "cosine");
  EXPECT_EQ(r.warmup_epochs, 5);
  const TrainConfig s = from_flags("--lr-scheduler steplr --lr-step-size 30 --lr-gamma 0.1");
  EXPECT_EQ(s.schedule, ScheduleKind::kStep);
  EXPECT_EQ(s.step_every_epochs, 30);
  EXPECT_EQ(s.step_gamma, 0.1);
  EXPECT_EQ(from_flags("--lr-scheduler ExponentialLR").schedule, ScheduleKind::kExponential);
  EXPECT_EQ(testing::usage_error_text([] { from_flags("--lr-scheduler cycliclr"); }),
            "--lr-scheduler must be one of constant, cosine, step, exponential, multistep, "
            "onecycle, plateau, "
            "polynomial, cosine_restarts, cosineannealinglr, steplr, exponentiallr, multisteplr, "
            "onecyclelr, "
            "reducelronplateau, polynomiallr, cosineannealingwarmrestarts (got 'cycliclr')");
  const TrainConfig p = from_flags(
      "--lr-scheduler ReduceLROnPlateau --plateau-factor 0.5 --plateau-patience 3 "
      "--plateau-threshold 0.01 --plateau-threshold-mode abs --plateau-cooldown 1 "
      "--min-lr 1e-6");
  EXPECT_EQ(p.schedule, ScheduleKind::kPlateau);
  EXPECT_EQ(to_string(p.schedule), "plateau");
  EXPECT_EQ(p.plateau_factor, 0.5);
  EXPECT_EQ(p.plateau_patience, 3);
  EXPECT_EQ(p.plateau_threshold, 0.01);
  EXPECT_EQ(p.plateau_threshold_mode, "abs");
  EXPECT_EQ(p.plateau_cooldown, 1);
  EXPECT_EQ(p.lr_min, 1e-6);
  EXPECT_NO_THROW(validate(p));
  // PyTorch's other two, with their arguments' names.
  const TrainConfig m = from_flags("--lr-scheduler MultiStepLR --milestones 30,60,80 --gamma 0.2");
  EXPECT_EQ(m.schedule, ScheduleKind::kMultiStep);
  EXPECT_EQ(to_string(m.schedule), "multistep");
  EXPECT_EQ(lr_milestones_of(m), (std::vector<int>{30, 60, 80}));
  EXPECT_EQ(m.step_gamma, 0.2);
  EXPECT_NO_THROW(validate(m));
  const TrainConfig o = from_flags(
      "--lr-scheduler OneCycleLR --opt sgd --lr 0.1 --pct-start 0.25 --div-factor 10 "
      "--final-div-factor 100 --anneal-strategy linear --three-phase "
      "--base-momentum 0.8 --max-momentum 0.9");
  EXPECT_EQ(o.schedule, ScheduleKind::kOneCycle);
  EXPECT_EQ(o.pct_start, 0.25);
  EXPECT_EQ(o.div_factor, 10);
  EXPECT_EQ(o.final_div_factor, 100);
  EXPECT_EQ(o.anneal_strategy, "linear");
  EXPECT_TRUE(o.three_phase);
  EXPECT_EQ(o.base_momentum, 0.8);
  EXPECT_EQ(o.max_momentum, 0.9);
  EXPECT_NO_THROW(validate(o));
  EXPECT_EQ(lr_milestones_of(from_flags("--lr-milestones '5 9'")), (std::vector<int>{5, 9}));
  // PolynomialLR and CosineAnnealingWarmRestarts, by their class and argument names too.
  const TrainConfig poly = from_flags("--lr-scheduler PolynomialLR --power 0.9");
  EXPECT_EQ(poly.schedule, ScheduleKind::kPolynomial);
  EXPECT_EQ(to_string(poly.schedule), "polynomial");
  EXPECT_EQ(poly.poly_power, 0.9);
  EXPECT_NO_THROW(validate(poly));
  const TrainConfig restarts =
      from_flags("--schedule cosine_restarts --restart-epochs 5 --restart_mult 2 --lr-min 1e-5");
  EXPECT_EQ(restarts.schedule, ScheduleKind::kCosineRestarts);
  EXPECT_EQ(restarts.restart_epochs, 5);
  EXPECT_EQ(restarts.restart_mult, 2);
  EXPECT_NO_THROW(validate(restarts));
  EXPECT_EQ(from_flags("--lr-scheduler CosineAnnealingWarmRestarts --t-0 3 --t-mult 4"),
            from_flags("--schedule cosine_restarts --restart-epochs 3 --restart-mult 4"));
  const TrainConfig accuracy = from_flags("--schedule plateau --plateau-metric val_top1");
  EXPECT_EQ(accuracy.plateau_metric, "val_top1");
  EXPECT_NO_THROW(validate(accuracy));
  EXPECT_EQ(testing::usage_error_text([] { validate(from_flags("--warmup-steps 100 --lr-warmup-epochs 2")); }),
            "warmup_steps 100 and warmup_epochs 2 both set the warmup; give one");
  const TrainConfig w = from_flags(
      "--lr-warmup-method constant --lr-warmup-decay 0.1 --lr-min 1e-5 --lr-scheduler "
      "cosineannealinglr");
  EXPECT_EQ(w.warmup_method, "constant");
  EXPECT_EQ(w.warmup_decay, 0.1);
  EXPECT_EQ(w.lr_min, 1e-5);
  EXPECT_NO_THROW(validate(w));

  TrainConfig expected;
  expected.interpolation = "bicubic";
  expected.train_crop_size = 176;
  EXPECT_EQ(from_yaml("interpolation: bicubic\ntrain_crop_size: 176\n"), expected);
}

// The transform chains may be YAML lists, one transform per item, as a Compose is written.
TEST(ConfigYamlTest, TransformChainsMayBeLists) {
  const TrainConfig c = from_yaml(
      "transforms:\n"
      "  - RandomResizedCrop(224, scale=(0.08, 1.0))\n"
      "  - RandomHorizontalFlip()\n"
      "  - Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])\n"
      "val_transforms: [Resize(256), CenterCrop(224)]\n");
  EXPECT_EQ(c.transforms,
            "RandomResizedCrop(224, scale=(0.08, 1.0)), RandomHorizontalFlip(), Normalize(mean=[0.485, 0.456, 0.406], "
            "std=[0.229, 0.224, 0.225])");
  EXPECT_EQ(c.val_transforms, "Resize(256), CenterCrop(224)");
  EXPECT_EQ(yaml_error("transforms:\n  - Resize(256)\n  - {a: 1}\n"),
            "c.yaml:3: key 'transforms' lists transforms, one per item, e.g. '- Resize(256)' (got a map)");
  // MultiStepLR's milestones, too.
  EXPECT_EQ(lr_milestones_of(from_yaml("lr_milestones: [30, 60, 80]\n")), (std::vector<int>{30, 60, 80}));
  EXPECT_EQ(yaml_error("lr_milestones: [30, [60]]\n"),
            "c.yaml:1: key 'lr_milestones' lists epochs, one per item, e.g. [30, 60, 80] (got a list)");
  EXPECT_EQ(yaml_error("data: [a, b]\n"), "c.yaml:1: key 'data' must be a string (got a list)");
}

TEST(ConfigYamlTest, AFileWithAnErrorChangesNothing) {
  TempDir dir;
  TrainConfig config;
  config.epochs = 9;
  const std::string path = dir.write_text("c.yaml", "batch_size: 3\nepochs: two\n");
  EXPECT_THROW(apply_yaml_file(path, &config), UsageError);
  EXPECT_EQ(config.batch_size, 64);
  EXPECT_EQ(config.epochs, 9);
}

TEST(ConfigYamlTest, MissingFileOrDirectory) {
  TempDir dir;
  TrainConfig config;
  const std::string missing = dir.str() + "/none.yaml";
  EXPECT_EQ(testing::usage_error_text([&] { apply_yaml_file(missing, &config); }),
            "config file " + missing + " does not exist");
  EXPECT_EQ(testing::usage_error_text([&] { apply_yaml_file(dir.str(), &config); }),
            "config file " + dir.str() + " is a directory; give the path of a .yaml file");
}

TEST(TrainConfigTest, ValidateNamesTheKeyTheValueAndTheRange) {
  struct Case {
    std::function<void(TrainConfig*)> edit;
    const char* message;
  };
  const std::vector<Case> cases = {
      {[](TrainConfig* c) { c->val_split = 1; }, "val_split must be in [0, 1) (got 1)"},
      {[](TrainConfig* c) {
         c->val_split = 0.1;
         c->val_data = "val/";
       },
       "val_split 0.1 holds out part of the training data for validation, and val_data val/ is "
       "validation data too; "
       "give one of them"},
      {[](TrainConfig* c) { c->model = "resnet"; },
       "model must be one of mnist_cnn, mlp, resnet18, resnet50, efficientnet_b0, efficientnet_b1, "
       "efficientnet_b2, "
       "efficientnet_b3, efficientnet_b4, efficientnet_b5, efficientnet_b6, efficientnet_b7 (got "
       "'resnet'); did you mean 'resnet18'?"},
      {[](TrainConfig* c) { c->model = "efficientnet-b0"; },
       "model must be one of mnist_cnn, mlp, resnet18, resnet50, efficientnet_b0, efficientnet_b1, "
       "efficientnet_b2, "
       "efficientnet_b3, efficientnet_b4, efficientnet_b5, efficientnet_b6, efficientnet_b7 (got "
       "'efficientnet-b0'); did you mean 'efficientnet_b0'?"},
      {[](TrainConfig* c) { c->model = "vit"; },
       "model must be one of mnist_cnn, mlp, resnet18, resnet50, efficientnet_b0, efficientnet_b1, "
       "efficientnet_b2, "
       "efficientnet_b3, efficientnet_b4, efficientnet_b5, efficientnet_b6, efficientnet_b7 (got "
       "'vit')"},
      {[](TrainConfig* c) { c->data = ""; },
       "data must not be empty: give an image folder (one subfolder per class), an IDX directory, a CSV file (image "
       "list or numeric feature table), a TSV file (tab-separated image list or feature table), NumPy arrays (.npz, "
       ".npy), PyTorch tensors (.pt, .pth from torch.save), an "
       "HDF5 file (.h5, .hdf5; file.h5:group for a group) or WebDataset shards (.tar of <key>.jpg + <key>.cls)"},
      {[](TrainConfig* c) { c->epochs = 0; }, "epochs must be >= 1 (got 0)"},
      {[](TrainConfig* c) { c->batch_size = 0; }, "batch_size must be between 1 and 65536 (got 0)"},
      {[](TrainConfig* c) { c->lr = 0; }, "lr must be > 0 (got 0)"},
      {[](TrainConfig* c) { c->weight_decay = -0.5; }, "weight_decay must be >= 0 (got -0.5)"},
      {[](TrainConfig* c) { c->momentum = 1; }, "momentum must be in [0, 1) (got 1)"},
      {[](TrainConfig* c) {
         c->optimizer = OptimizerKind::kSgd;
         c->nesterov = true;
         c->momentum = 0;
       },
       "nesterov needs momentum > 0 (got momentum 0); set momentum (e.g. 0.9) or nesterov: false"},
      {[](TrainConfig* c) {
         c->optimizer = OptimizerKind::kRmsprop;
         c->nesterov = true;
       },
       "nesterov applies to sgd (optimizer is rmsprop); leave nesterov out, or set optimizer sgd"},
      {[](TrainConfig* c) { c->warmup_steps = -1; }, "warmup_steps must be >= 0 (got -1)"},
      {[](TrainConfig* c) { c->ra_reps = 0; }, "ra_reps must be between 1 and 64 (got 0); 3 and 4 are common"},
      {[](TrainConfig* c) { c->warmup_method = "cosine"; },
       "warmup_method must be one of linear, constant (got 'cosine')"},
      {[](TrainConfig* c) { c->warmup_decay = 1.5; }, "warmup_decay must be in [0, 1] (got 1.5)"},
      {[](TrainConfig* c) {
         c->warmup_method = "constant";
         c->warmup_decay = 0;
       },
       "warmup_method constant with warmup_decay 0 holds the learning rate at 0 through the "
       "warmup; set warmup_decay "
       "(torchvision's default is 0.01) or warmup_method linear"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kCosine;
         c->lr_min = 0.01;
       },
       "lr_min must be in [0, lr] = [0, 0.001] (got 0.01); it is where the cosine schedule ends"},
      {[](TrainConfig* c) { c->lr_min = 1e-5; },
       "lr_min 1e-05 is where the cosine schedule ends (cosine_restarts' bottom, plateau's floor), "
       "and the schedule "
       "is constant; set schedule cosine or leave lr_min out"},
      {[](TrainConfig* c) { c->step_gamma = 0; }, "step_gamma must be in (0, 1] (got 0)"},
      {[](TrainConfig* c) { c->step_every_epochs = 0; }, "step_every_epochs must be >= 1 (got 0)"},
      {[](TrainConfig* c) { c->label_smoothing = 1; }, "label_smoothing must be in [0, 1) (got 1)"},
      {[](TrainConfig* c) { c->early_stopping_patience = -1; }, "early_stopping_patience must be >= 0 (got -1)"},
      {[](TrainConfig* c) { c->ema_decay = 1; },
       "ema_decay must be in [0, 1) (got 1); 0 turns the average off, 0.9998 and 0.999 are common "
       "choices"},
      {[](TrainConfig* c) { c->ema_steps = 0; },
       "ema_steps must be between 1 and 100000 (got 0); 1 = every optimizer step, or auto"},
      {[](TrainConfig* c) { c->ema_decay = std::nan(""); },
       "ema_decay must be in [0, 1) (got nan); 0 turns the average off, 0.9998 and 0.999 are "
       "common choices"},
      {[](TrainConfig* c) { c->norm_weight_decay = std::nan(""); },
       "norm_weight_decay must be a finite number >= 0, or auto for weight_decay's value (got "
       "nan)"},
      {[](TrainConfig* c) { c->mixup_alpha = -0.2; },
       "mixup_alpha must be a finite number >= 0 (got -0.2); 0 turns it off, 0.2 is a common "
       "choice"},
      {[](TrainConfig* c) { c->cutmix_alpha = std::numeric_limits<double>::infinity(); },
       "cutmix_alpha must be a finite number >= 0 (got inf); 0 turns it off, 1.0 is a common "
       "choice"},
      {[](TrainConfig* c) {
         c->task = TaskKind::kRegression;
         c->cutmix_alpha = 1;
       },
       "mixup_alpha and cutmix_alpha mix class targets and apply to classification only (task is "
       "regression); "
       "set them to 0"},
      {[](TrainConfig* c) { c->auto_augment = "trivial"; },
       "auto_augment must be one of none, ta_wide, ra, imagenet, cifar10, svhn, augmix (got "
       "'trivial')"},
      {[](TrainConfig* c) { c->augmix_severity = 11; },
       "augmix_severity must be between 1 and 10 (got 11); AugMix's magnitudes come from the bins "
       "below it, of 10"},
      {[](TrainConfig* c) { c->ra_magnitude = 31; },
       "ra_magnitude must be between 0 and 30 (got 31); RandAugment has 31 magnitude bins"},
      {[](TrainConfig* c) { c->random_erase = 1.5; }, "random_erase must be in [0, 1] (got 1.5)"},
      {[](TrainConfig* c) { c->clip_grad_norm = -1; },
       "clip_grad_norm must be a finite number >= 0 (got -1); 0 turns clipping off, 1.0 is a "
       "common choice"},
      {[](TrainConfig* c) { c->clip_grad_norm = std::numeric_limits<double>::infinity(); },
       "clip_grad_norm must be a finite number >= 0 (got inf); 0 turns clipping off, 1.0 is a "
       "common choice"},
      {[](TrainConfig* c) { c->cache_max_gb = -1; }, "cache_max_gb must be >= 0 (got -1)"},
      {[](TrainConfig* c) { c->threads = -2; }, "threads must be between 0 and 1024 (got -2); 0 = automatic"},
      {[](TrainConfig* c) { c->nproc_per_node = 2000; },
       "nproc_per_node must be between 1 and 1024 (got 2000); 1 = this process alone"},
      {[](TrainConfig* c) {
         c->task = TaskKind::kClassification;
         c->loss = LossKind::kL1;
       },
       "loss l1 is for regression; a classification task takes loss cross_entropy (or auto)"},
      {[](TrainConfig* c) {
         c->task = TaskKind::kRegression;
         c->loss = LossKind::kCrossEntropy;
       },
       "loss cross_entropy is for classification; a regression task takes loss mse, l1, smooth_l1 "
       "(or auto)"},
      {[](TrainConfig* c) {
         c->task = TaskKind::kRegression;
         c->label_smoothing = 0.1;
       },
       "label_smoothing applies to classification only (got 0.1 with task regression); set it to "
       "0"},
      {[](TrainConfig* c) { c->num_workers = 0; },
       "num_workers must be between 1 and 1024 (got 0); stoker always loads on worker threads: 1 "
       "is the fewest, or auto"},
      {[](TrainConfig* c) { c->num_workers = 2000; }, "num_workers must be between 1 and 1024 (got 2000); or auto"},
      {[](TrainConfig* c) { c->prefetch_factor = 0; }, "prefetch_factor must be between 1 and 64 (got 0)"},
      {[](TrainConfig* c) { c->accumulation_steps = 0; }, "accumulation_steps must be >= 1 (got 0)"},
      {[](TrainConfig* c) { c->checkpoint_every_steps = -5; }, "checkpoint_every_steps must be >= 0 (got -5)"},
      {[](TrainConfig* c) { c->output_dir = ""; }, "output_dir must not be empty (use . for the current directory)"},
      {[](TrainConfig* c) { c->max_steps = -1; }, "max_steps must be >= 0 (got -1)"},
      {[](TrainConfig* c) { c->max_bad_fraction = 1.5; }, "max_bad_fraction must be in [0, 1] (got 1.5)"},
      {[](TrainConfig* c) { c->device = "gpu:1"; },
       "device must be auto, cpu, cuda or cuda:N (got 'gpu:1'); did you mean 'cuda:1'?"},
      {[](TrainConfig* c) { c->device = "cuda:x"; }, "device must be auto, cpu, cuda or cuda:N (got 'cuda:x')"},
      {[](TrainConfig* c) { c->schedule = ScheduleKind::kMultiStep; },
       "schedule multistep needs lr_milestones, the epochs at which lr is multiplied by "
       "step_gamma, e.g. "
       "--lr-milestones 30,60,80"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kMultiStep;
         c->lr_milestones = "30, 20";
       },
       "lr_milestones must increase (got 20 after 30 in '30, 20')"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kMultiStep;
         c->lr_milestones = "30, 6O";
       },
       "lr_milestones must be epochs >= 1 separated by commas, e.g. '30, 60, 80' (got '6O' in '30, "
       "6O')"},
      {[](TrainConfig* c) { c->lr_milestones = "30"; },
       "lr_milestones '30' are schedule multistep's, and the schedule is constant; set schedule "
       "multistep or leave "
       "lr_milestones out"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kCosine;
         c->pct_start = 0.25;
       },
       "pct_start is schedule onecycle's, and the schedule is cosine; set schedule onecycle or "
       "leave pct_start out"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kOneCycle;
         c->pct_start = 1;
       },
       "pct_start must be in (0, 1) (got 1); OneCycleLR's default is 0.3"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kOneCycle;
         c->three_phase = true;
         c->pct_start = 0.6;
       },
       "pct_start must be below 0.5 with three_phase (got 0.6): the rise and the fall back each "
       "take pct_start of "
       "the run"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kOneCycle;
         c->div_factor = 0;
       },
       "div_factor must be a finite number > 0 (got 0); OneCycleLR's default is 25"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kOneCycle;
         c->anneal_strategy = "cosine";
       },
       "anneal_strategy must be one of cos, linear (got 'cosine')"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kOneCycle;
         c->base_momentum = 0.97;
       },
       "base_momentum and max_momentum must satisfy 0 <= base_momentum <= max_momentum < 1 (got "
       "0.97 and 0.95); "
       "OneCycleLR's defaults are 0.85 and 0.95"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kOneCycle;
         c->warmup_epochs = 2;
       },
       "schedule onecycle rises from lr / div_factor over pct_start of the run itself, and a "
       "warmup (warmup_epochs "
       "2) is set too; leave the warmup out, or set pct_start"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kOneCycle;
         c->optimizer = OptimizerKind::kSgd;
         c->momentum = 0.8;
       },
       "momentum 0.8 is not used with schedule onecycle and cycle_momentum, which moves the "
       "momentum between "
       "max_momentum and base_momentum; set those, or cycle_momentum false to keep momentum"},
      {[](TrainConfig* c) { c->plateau_patience = 3; },
       "plateau_patience is schedule plateau's, and the schedule is constant; set schedule plateau "
       "or leave "
       "plateau_patience out"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kPlateau;
         c->plateau_factor = 1;
       },
       "plateau_factor must be in (0, 1) (got 1); ReduceLROnPlateau's default is 0.1"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kPlateau;
         c->plateau_threshold_mode = "relative";
       },
       "plateau_threshold_mode must be one of rel, abs (got 'relative')"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kPlateau;
         c->plateau_cooldown = -1;
       },
       "plateau_cooldown must be >= 0 (got -1)"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kPlateau;
         c->plateau_metric = "val_acc";
       },
       "plateau_metric must be one of val_loss, val_top1, val_mae (got 'val_acc')"},
      {[](TrainConfig* c) { c->plateau_metric = "val_top1"; },
       "plateau_metric is schedule plateau's, and the schedule is constant; set schedule plateau "
       "or leave "
       "plateau_metric out"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kPolynomial;
         c->poly_power = 0;
       },
       "poly_power must be a finite number > 0 (got 0); PolynomialLR's default is 1, torchvision's "
       "segmentation "
       "recipe uses 0.9"},
      {[](TrainConfig* c) { c->poly_power = 2; },
       "poly_power is schedule polynomial's, and the schedule is constant; set schedule polynomial "
       "or leave "
       "poly_power out"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kCosineRestarts;
         c->restart_epochs = 0;
       },
       "restart_epochs must be >= 1 (got 0); it is the first cycle's length in epochs, "
       "CosineAnnealingWarmRestarts' "
       "T_0"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kCosineRestarts;
         c->restart_mult = 0;
       },
       "restart_mult must be >= 1 (got 0); 1 keeps every cycle restart_epochs long, 2 doubles "
       "each"},
      {[](TrainConfig* c) {
         c->schedule = ScheduleKind::kCosine;
         c->restart_mult = 2;
       },
       "restart_mult is schedule cosine_restarts's, and the schedule is cosine; set schedule "
       "cosine_restarts or "
       "leave restart_mult out"},
  };
  for (const Case& c : cases) {
    TrainConfig config;
    c.edit(&config);
    EXPECT_EQ(testing::usage_error_text([&] { validate(config); }), c.message);
  }
  for (const char* device : {"auto", "cpu", "cuda", "cuda:0", "cuda:15"}) {
    TrainConfig config;
    config.device = device;
    EXPECT_NO_THROW(validate(config)) << device;
  }
}

// Each key's range is declared once, in its schema row, and validate() reads it: a value just
// below the range (and one just above, where there is a top) is refused with the key's name.
TEST(TrainConfigTest, EveryDeclaredRangeIsCheckedByValidate) {
  int ranged = 0;
  for (const detail::Field& field : detail::fields()) {
    const detail::Range& range = field.range;
    if (range.kind == detail::Range::Kind::kNone) continue;
    ++ranged;
    std::vector<double> outside = {range.min - 1};
    if (range.kind == detail::Range::Kind::kBetween || range.kind == detail::Range::Kind::kInterval) {
      outside.push_back(range.max + 1);
    }
    for (const double value : outside) {
      TrainConfig config;
      detail::set_field(field, fmt::format("{}", value), field.name, &config);
      const std::string message = testing::usage_error_text([&] { validate(config); });
      EXPECT_TRUE(message.starts_with(field.name + " must be ")) << field.name << " = " << value << ": " << message;
    }
  }
  EXPECT_EQ(ranged, 51);
}

TEST(TrainConfigTest, ToYamlRoundTrips) {
  // Every member differs from its default, so a member left out of the schema fails here.
  TrainConfig config;
  config.model = "resnet50";
  config.data = "/data/my images: train #1";  // needs quoting
  config.val_data = "off";                    // would read as a YAML 1.1 bool
  config.transforms = "RandomResizedCrop(224, scale=(0.08, 1.0)), RandomHorizontalFlip()";
  config.epochs = 90;
  config.batch_size = 256;
  config.lr = 0.1 / 3;  // no short decimal
  config.optimizer = OptimizerKind::kSgd;
  config.weight_decay = 1e-4;
  config.momentum = 0.875;
  config.nesterov = true;
  config.schedule = ScheduleKind::kStep;
  config.warmup_steps = 500;
  config.step_gamma = 0.2;
  config.step_every_epochs = 7;
  config.lr_milestones = "30, 60";
  config.pct_start = 0.25;
  config.div_factor = 10;
  config.final_div_factor = 100;
  config.anneal_strategy = "linear";
  config.three_phase = true;
  config.cycle_momentum = false;
  config.base_momentum = 0.8;
  config.max_momentum = 0.9;
  config.plateau_factor = 0.5;
  config.plateau_patience = 3;
  config.plateau_threshold = 0.01;
  config.plateau_threshold_mode = "abs";
  config.plateau_cooldown = 2;
  config.plateau_metric = "val_top1";
  config.poly_power = 0.9;
  config.restart_epochs = 5;
  config.restart_mult = 2;
  config.label_smoothing = 0.1;
  config.mixup_alpha = 0.2;
  config.cutmix_alpha = 1.0 / 3;
  config.norm_weight_decay = 0;
  config.num_workers = 12;
  config.prefetch_factor = 2;
  config.pin_memory = false;
  config.persistent_workers = false;
  config.amp = AmpMode::kFp16;
  config.accumulation_steps = 3;
  config.seed = 18446744073709551615u;
  config.checkpoint_every_steps = 1000;
  config.output_dir = " runs";
  config.tensorboard = false;
  config.resume = "runs/2024-01-01/ckpt-000100.pt";
  config.device = "cuda:3";
  config.max_steps = 1234567890123;
  config.max_bad_fraction = 1;
  const std::string yaml = to_yaml(config);
  EXPECT_EQ(from_yaml(yaml), config) << yaml;
  EXPECT_EQ(from_yaml(to_yaml(TrainConfig{})), TrainConfig{});
}

}  // namespace
}  // namespace stoker::train
