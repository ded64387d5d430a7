#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/transform.h"
#include "support/error_text.h"

namespace stoker::data {
namespace {

void expect_same_spec(const TransformSpec& a, const TransformSpec& b) {
  EXPECT_EQ(a.geometry, b.geometry);
  EXPECT_EQ(a.out_width, b.out_width);
  EXPECT_EQ(a.out_height, b.out_height);
  EXPECT_EQ(a.resample, b.resample);
  EXPECT_EQ(a.resize.shorter, b.resize.shorter);
  EXPECT_EQ(a.resize.width, b.resize.width);
  EXPECT_EQ(a.resize.height, b.resize.height);
  EXPECT_EQ(a.resize.max_size, b.resize.max_size);
  if (a.geometry == Geometry::kRandomCrop) {
    EXPECT_EQ(a.pad.left, b.pad.left);
    EXPECT_EQ(a.pad.top, b.pad.top);
    EXPECT_EQ(a.pad.right, b.pad.right);
    EXPECT_EQ(a.pad.bottom, b.pad.bottom);
    EXPECT_EQ(a.pad.if_needed, b.pad.if_needed);
    EXPECT_EQ(a.pad.mode, b.pad.mode);
    EXPECT_EQ(a.pad.fill, b.pad.fill);
  }
  if (a.geometry == Geometry::kRandomResizedCrop) {
    EXPECT_EQ(a.random_resized_crop.scale_min, b.random_resized_crop.scale_min);
    EXPECT_EQ(a.random_resized_crop.scale_max, b.random_resized_crop.scale_max);
    EXPECT_EQ(a.random_resized_crop.ratio_min, b.random_resized_crop.ratio_min);
    EXPECT_EQ(a.random_resized_crop.ratio_max, b.random_resized_crop.ratio_max);
  }
  EXPECT_EQ(a.hflip.p, b.hflip.p);
  EXPECT_EQ(a.vflip.p, b.vflip.p);
  EXPECT_EQ(a.random_grayscale.p, b.random_grayscale.p);
  EXPECT_EQ(a.rotation.min_degrees, b.rotation.min_degrees);
  EXPECT_EQ(a.rotation.max_degrees, b.rotation.max_degrees);
  EXPECT_EQ(a.rotation.interpolation, b.rotation.interpolation);
  EXPECT_EQ(a.rotation.fill, b.rotation.fill);
  const AffineSpec& af = a.affine;
  const AffineSpec& bf = b.affine;
  EXPECT_EQ(af.min_degrees, bf.min_degrees);
  EXPECT_EQ(af.max_degrees, bf.max_degrees);
  EXPECT_EQ(af.translate, bf.translate);
  EXPECT_EQ(af.translate_x, bf.translate_x);
  EXPECT_EQ(af.translate_y, bf.translate_y);
  EXPECT_EQ(af.scale, bf.scale);
  EXPECT_EQ(af.scale_min, bf.scale_min);
  EXPECT_EQ(af.scale_max, bf.scale_max);
  EXPECT_EQ(af.shear, bf.shear);
  EXPECT_EQ(af.shear_x_min, bf.shear_x_min);
  EXPECT_EQ(af.shear_x_max, bf.shear_x_max);
  EXPECT_EQ(af.shear_y, bf.shear_y);
  EXPECT_EQ(af.shear_y_min, bf.shear_y_min);
  EXPECT_EQ(af.shear_y_max, bf.shear_y_max);
  EXPECT_EQ(af.interpolation, bf.interpolation);
  EXPECT_EQ(af.fill, bf.fill);
  EXPECT_EQ(a.jitter.apply_p, b.jitter.apply_p);
  EXPECT_EQ(a.blur.apply_p, b.blur.apply_p);
  EXPECT_EQ(a.rotation.apply_p, b.rotation.apply_p);
  EXPECT_EQ(af.apply_p, bf.apply_p);
  EXPECT_EQ(a.blur.kernel_w, b.blur.kernel_w);
  EXPECT_EQ(a.blur.kernel_h, b.blur.kernel_h);
  if (a.blur.enabled()) {
    EXPECT_EQ(a.blur.sigma_min, b.blur.sigma_min);
    EXPECT_EQ(a.blur.sigma_max, b.blur.sigma_max);
  }
  EXPECT_EQ(a.jitter.brightness, b.jitter.brightness);
  EXPECT_EQ(a.jitter.contrast, b.jitter.contrast);
  EXPECT_EQ(a.jitter.saturation, b.jitter.saturation);
  EXPECT_EQ(a.jitter.hue, b.jitter.hue);
  EXPECT_EQ(a.normalize.on, b.normalize.on);
  if (a.normalize.enabled()) {
    EXPECT_EQ(a.normalize.mean, b.normalize.mean);
    EXPECT_EQ(a.normalize.std, b.normalize.std);
  }
  EXPECT_EQ(a.channels, b.channels);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.layout, b.layout);
  EXPECT_EQ(a.features.standardize, b.features.standardize);
  const AutoAugmentSpec& x = a.auto_augment;
  const AutoAugmentSpec& y = b.auto_augment;
  EXPECT_EQ(x.kind, y.kind);
  EXPECT_EQ(x.policy, y.policy);
  EXPECT_EQ(x.num_ops, y.num_ops);
  EXPECT_EQ(x.magnitude, y.magnitude);
  EXPECT_EQ(x.num_magnitude_bins, y.num_magnitude_bins);
  EXPECT_EQ(x.interpolation, y.interpolation);
  EXPECT_EQ(x.severity, y.severity);
  EXPECT_EQ(x.mixture_width, y.mixture_width);
  EXPECT_EQ(x.chain_depth, y.chain_depth);
  EXPECT_EQ(x.alpha, y.alpha);
  EXPECT_EQ(x.all_ops, y.all_ops);
  EXPECT_EQ(x.has_fill, y.has_fill);
  EXPECT_EQ(x.fill, y.fill);
  for (int i = 0; i < kColorOps; ++i) {
    SCOPED_TRACE(to_string(static_cast<ColorOp>(i)));
    EXPECT_EQ(a.color_ops[static_cast<size_t>(i)].p, b.color_ops[static_cast<size_t>(i)].p);
    EXPECT_EQ(a.color_ops[static_cast<size_t>(i)].value, b.color_ops[static_cast<size_t>(i)].value);
  }
  EXPECT_EQ(a.erasing.p, b.erasing.p);
  EXPECT_EQ(a.erasing.scale_min, b.erasing.scale_min);
  EXPECT_EQ(a.erasing.scale_max, b.erasing.scale_max);
  EXPECT_EQ(a.erasing.ratio_min, b.erasing.ratio_min);
  EXPECT_EQ(a.erasing.ratio_max, b.erasing.ratio_max);
  EXPECT_EQ(a.erasing.random_value, b.erasing.random_value);
  EXPECT_EQ(a.erasing.value, b.erasing.value);
}

TEST(ParseTransformsTest, ParsesTorchvisionChains) {
  struct Case {
    const char* text;
    std::function<void(TransformSpec*)> expect;  // edits a default parse result
  };
  const std::vector<Case> cases = {
      {"RandomResizedCrop(224)",
       [](TransformSpec* s) {
         s->geometry = Geometry::kRandomResizedCrop;
         s->out_width = s->out_height = 224;
       }},
      {"RandomResizedCrop((160, 192), scale=(0.35, 1), ratio=(0.5, 2))",
       [](TransformSpec* s) {
         s->geometry = Geometry::kRandomResizedCrop;
         s->out_height = 160;
         s->out_width = 192;
         s->random_resized_crop.scale_min = 0.35;
         s->random_resized_crop.ratio_min = 0.5;
         s->random_resized_crop.ratio_max = 2;
       }},
      {"RandomResizedCrop(size=[128], scale=(0.08, 1.0))",
       [](TransformSpec* s) {
         s->geometry = Geometry::kRandomResizedCrop;
         s->out_width = s->out_height = 128;
       }},
      {"RandomResizedCrop(96, (0.5, 1), (1, 1))",
       [](TransformSpec* s) {
         s->geometry = Geometry::kRandomResizedCrop;
         s->out_width = s->out_height = 96;
         s->random_resized_crop.scale_min = 0.5;
         s->random_resized_crop.ratio_min = s->random_resized_crop.ratio_max = 1;
       }},
      {"Resize(256), CenterCrop(224)",
       [](TransformSpec* s) {
         s->geometry = Geometry::kResizeCenterCrop;
         s->resize.shorter = 256;
         s->out_width = s->out_height = 224;
       }},
      // torchvision's CenterCrop alone: 1:1; resize=True is stoker's, the shorter side resized
      // to the crop first.
      {"CenterCrop(224)",
       [](TransformSpec* s) {
         s->geometry = Geometry::kCenterCrop;
         s->out_width = s->out_height = 224;
       }},
      {"CenterCrop((100, 120))",
       [](TransformSpec* s) {
         s->geometry = Geometry::kCenterCrop;
         s->out_height = 100;
         s->out_width = 120;
       }},
      {"CenterCrop(224, resize=True)",
       [](TransformSpec* s) {
         s->geometry = Geometry::kResizeCenterCrop;
         s->resize.shorter = 224;
         s->out_width = s->out_height = 224;
       }},
      {"CenterCrop((100, 120), resize=True)",
       [](TransformSpec* s) {
         s->geometry = Geometry::kResizeCenterCrop;
         s->resize.shorter = 120;
         s->out_height = 100;
         s->out_width = 120;
       }},
      // A Resize before any crop; (height, width) for a fixed size, which may stand alone.
      {"Resize((224, 224))",
       [](TransformSpec* s) {
         s->geometry = Geometry::kResizeCenterCrop;
         s->resize.width = s->resize.height = 224;
         s->out_width = s->out_height = 224;
       }},
      {"Resize(size=(100, 120)), CenterCrop(96)",
       [](TransformSpec* s) {
         s->geometry = Geometry::kResizeCenterCrop;
         s->resize.height = 100;
         s->resize.width = 120;
         s->out_width = s->out_height = 96;
       }},
      {"Resize([128]), CenterCrop(112)",  // a one-element size is the shorter side
       [](TransformSpec* s) {
         s->geometry = Geometry::kResizeCenterCrop;
         s->resize.shorter = 128;
         s->out_width = s->out_height = 112;
       }},
      {"Resize(40), CenterCrop(32, resize=False)",  // after a Resize, the same crop
       [](TransformSpec* s) {
         s->geometry = Geometry::kResizeCenterCrop;
         s->resize.shorter = 40;
         s->out_width = s->out_height = 32;
       }},
      {"Resize(256), RandomCrop(224)",
       [](TransformSpec* s) {
         s->geometry = Geometry::kRandomCrop;
         s->resize.shorter = 256;
         s->out_width = s->out_height = 224;
       }},
      {"RandomCrop(32, padding=4), Resize((36, 40))",
       [](TransformSpec* s) {
         s->geometry = Geometry::kRandomCrop;
         s->resize.height = 36;
         s->resize.width = 40;
         s->out_width = s->out_height = 32;
         s->pad.left = s->pad.top = s->pad.right = s->pad.bottom = 4;
       }},
      // torchvision's resampling arguments, where they ask for what stoker does.
      {"Resize(256, interpolation=InterpolationMode.BILINEAR, antialias=True), CenterCrop(224)",
       [](TransformSpec* s) {
         s->geometry = Geometry::kResizeCenterCrop;
         s->resize.shorter = 256;
         s->out_width = s->out_height = 224;
       }},
      {"Resize(256, 2, None, None), RandomResizedCrop(224, interpolation=bilinear, antialias=None)",
       [](TransformSpec* s) {
         s->geometry = Geometry::kRandomResizedCrop;
         s->resize.shorter = 256;
         s->out_width = s->out_height = 224;
       }},
      {"Resize(256, max_size=320), RandomCrop(224)",
       [](TransformSpec* s) {
         s->geometry = Geometry::kRandomCrop;
         s->resize.shorter = 256;
         s->resize.max_size = 320;
         s->out_width = s->out_height = 224;
       }},
      {"Resize(300), RandomResizedCrop(224)",
       [](TransformSpec* s) {
         s->geometry = Geometry::kRandomResizedCrop;
         s->resize.shorter = 300;
         s->out_width = s->out_height = 224;
       }},
      {"RandomResizedCrop(96, interpolation=InterpolationMode.BICUBIC)",
       [](TransformSpec* s) {
         s->geometry = Geometry::kRandomResizedCrop;
         s->out_width = s->out_height = 96;
         s->resample = ResampleFilter::kBicubic;
       }},
      {"Resize(256, interpolation=3), CenterCrop(224)",  // PIL's Image.BICUBIC
       [](TransformSpec* s) {
         s->geometry = Geometry::kResizeCenterCrop;
         s->resize.shorter = 256;
         s->out_width = s->out_height = 224;
         s->resample = ResampleFilter::kBicubic;
       }},
      {"Resize(256, interpolation='bicubic'), RandomResizedCrop(224, interpolation=bicubic)",
       [](TransformSpec* s) {
         s->geometry = Geometry::kRandomResizedCrop;
         s->resize.shorter = 256;
         s->out_width = s->out_height = 224;
         s->resample = ResampleFilter::kBicubic;
       }},
      {"RandomHorizontalFlip", [](TransformSpec* s) { s->hflip.p = 0.5; }},
      {"RandomHorizontalFlip()", [](TransformSpec* s) { s->hflip.p = 0.5; }},
      {"RandomHorizontalFlip(p=0.25)", [](TransformSpec* s) { s->hflip.p = 0.25; }},
      {"RandomHorizontalFlip(1)", [](TransformSpec* s) { s->hflip.p = 1; }},
      {"RandomVerticalFlip", [](TransformSpec* s) { s->vflip.p = 0.5; }},
      {"RandomVerticalFlip(p=0.2)", [](TransformSpec* s) { s->vflip.p = 0.2; }},
      {"RandomGrayscale", [](TransformSpec* s) { s->random_grayscale.p = 0.1; }},  // torchvision's default
      {"GaussianBlur(23)",  // torchvision's default sigma (0.1, 2.0)
       [](TransformSpec* s) { s->blur.kernel_w = s->blur.kernel_h = 23; }},
      {"GaussianBlur(kernel_size=(5, 3), sigma=(0.5, 1.5))",
       [](TransformSpec* s) {
         s->blur.kernel_w = 5;
         s->blur.kernel_h = 3;
         s->blur.sigma_min = 0.5;
         s->blur.sigma_max = 1.5;
       }},
      {"GaussianBlur(3, 1)",
       [](TransformSpec* s) {
         s->blur.kernel_w = s->blur.kernel_h = 3;
         s->blur.sigma_min = s->blur.sigma_max = 1;
       }},
      {"RandomRotation(15)",
       [](TransformSpec* s) {
         s->rotation.min_degrees = -15;
         s->rotation.max_degrees = 15;
       }},
      {"RandomRotation(degrees=5, expand=False, center=None, fill=0)",
       [](TransformSpec* s) {
         s->rotation.min_degrees = -5;
         s->rotation.max_degrees = 5;
       }},
      {"RandomRotation((-10, 30), interpolation=InterpolationMode.BILINEAR, fill=(1, 2, 3))",
       [](TransformSpec* s) {
         s->rotation.min_degrees = -10;
         s->rotation.max_degrees = 30;
         s->rotation.interpolation = Interpolation::kBilinear;
         s->rotation.fill = {1, 2, 3};
       }},
      {"RandomAffine(10)",
       [](TransformSpec* s) {
         s->affine.min_degrees = -10;
         s->affine.max_degrees = 10;
       }},
      {"RandomAffine(degrees=0, translate=(0.1, 0.2), scale=(0.9, 1.1), shear=5, fill=None, center=None)",
       [](TransformSpec* s) {
         s->affine.translate = true;
         s->affine.translate_x = 0.1;
         s->affine.translate_y = 0.2;
         s->affine.scale = true;
         s->affine.scale_min = 0.9;
         s->affine.scale_max = 1.1;
         s->affine.shear = true;
         s->affine.shear_x_min = -5;
         s->affine.shear_x_max = 5;
       }},
      {"RandomAffine((-5, 20), shear=(-3, 4, 1, 2), interpolation=InterpolationMode.BILINEAR, fill=(1, 2, 3))",
       [](TransformSpec* s) {
         s->affine.min_degrees = -5;
         s->affine.max_degrees = 20;
         s->affine.shear = true;
         s->affine.shear_x_min = -3;
         s->affine.shear_x_max = 4;
         s->affine.shear_y = true;
         s->affine.shear_y_min = 1;
         s->affine.shear_y_max = 2;
         s->affine.interpolation = Interpolation::kBilinear;
         s->affine.fill = {1, 2, 3};
       }},
      {"RandomAffine(0, shear=(2, 8))",
       [](TransformSpec* s) {
         s->affine.shear = true;
         s->affine.shear_x_min = 2;
         s->affine.shear_x_max = 8;
       }},
      {"RandomApply([ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8)",
       [](TransformSpec* s) {
         s->jitter = {0.4, 0.4, 0.2, 0.1};
         s->jitter.apply_p = 0.8;
       }},
      {"RandomApply([GaussianBlur(23)])",
       [](TransformSpec* s) {
         s->blur.kernel_w = s->blur.kernel_h = 23;
         s->blur.apply_p = 0.5;
       }},
      {"RandomApply(transforms=[RandomRotation(10)], p=0.25), RandomApply([RandomAffine(0, scale=(0.5, 1))], p=1)",
       [](TransformSpec* s) {
         s->rotation.min_degrees = -10;
         s->rotation.max_degrees = 10;
         s->rotation.apply_p = 0.25;
         s->affine.scale = true;
         s->affine.scale_min = 0.5;
         s->affine.scale_max = 1;
       }},
      {"RandomGrayscale(0.25)", [](TransformSpec* s) { s->random_grayscale.p = 0.25; }},
      // torchvision's single-operation colour transforms; p defaults to 0.5.
      {"RandomSolarize(128, p=0.2)",
       [](TransformSpec* s) {
         s->color_ops[2] = {0.2, 128};
       }},
      {"RandomSolarize(threshold=200.5)",
       [](TransformSpec* s) {
         s->color_ops[2] = {0.5, 200.5};
       }},
      {"RandomPosterize(bits=4, p=1)",
       [](TransformSpec* s) {
         s->color_ops[1] = {1, 4};
       }},
      {"RandomAdjustSharpness(2)",
       [](TransformSpec* s) {
         s->color_ops[3] = {0.5, 2};
       }},
      {"RandomInvert(0.1), RandomAutocontrast(), RandomEqualize(p=0.3)",
       [](TransformSpec* s) {
         s->color_ops[0].p = 0.1;
         s->color_ops[4].p = 0.5;
         s->color_ops[5].p = 0.3;
       }},
      // RandomApply's coin and the transform's own: one of the product.
      {"RandomApply([RandomSolarize(128)], p=0.2)",
       [](TransformSpec* s) {
         s->color_ops[2] = {0.1, 128};
       }},
      {"RandomApply([RandomEqualize(p=1.0)], p=0.25)", [](TransformSpec* s) { s->color_ops[5].p = 0.25; }},
      {"ColorJitter(0.4, 0.3, 0.2, 0.1)",
       [](TransformSpec* s) {
         s->jitter = {0.4, 0.3, 0.2, 0.1};
       }},
      {"ColorJitter(brightness=0.4, hue=0.05)",
       [](TransformSpec* s) {
         s->jitter = {0.4, 0, 0, 0.05};
       }},
      {"ColorJitter(0.2, saturation=0.5)",
       [](TransformSpec* s) {
         s->jitter = {0.2, 0, 0.5, 0};
       }},
      {"Normalize", [](TransformSpec* s) { s->normalize.on = true; }},
      {"Normalize(imagenet)", [](TransformSpec* s) { s->normalize.on = true; }},
      {"Normalize(mean=(0.5, 0.5, 0.5), std=(0.25, 0.5, 2))",
       [](TransformSpec* s) {
         s->normalize.on = true;
         s->normalize.mean = {0.5f, 0.5f, 0.5f};
         s->normalize.std = {0.25f, 0.5f, 2.0f};
       }},
      {"Normalize([0.1, 0.2, 0.3], [1, 2, 3])",
       [](TransformSpec* s) {
         s->normalize.on = true;
         s->normalize.mean = {0.1f, 0.2f, 0.3f};
         s->normalize.std = {1, 2, 3};
       }},
      {"Grayscale, Normalize(mean=(0.5,), std=(0.5,))",
       [](TransformSpec* s) {
         s->channels = 1;
         s->normalize.on = true;
         s->normalize.mean = {0.5f, 0.5f, 0.5f};
         s->normalize.std = {0.5f, 0.5f, 0.5f};
       }},
      {"Grayscale(num_output_channels=1)", [](TransformSpec* s) { s->channels = 1; }},
      {"ToUint8", [](TransformSpec* s) { s->dtype = DType::kUint8; }},
      {"Float16; NHWC",
       [](TransformSpec* s) {
         s->dtype = DType::kFloat16;
         s->layout = Layout::kNHWC;
       }},
      {"Float32, NCHW", [](TransformSpec*) {}},
      {"none", [](TransformSpec*) {}},
      {"  none ,, ", [](TransformSpec*) {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    TransformSpec expected;
    expected.geometry = Geometry::kNone;
    expected.out_width = expected.out_height = 0;
    c.expect(&expected);
    TransformSpec got;
    ASSERT_NO_THROW(got = parse_transforms(c.text));
    expect_same_spec(got, expected);
  }
}

TEST(ParseTransformsTest, AutomaticAugmentationsAndErasingTakeTorchvisionsArguments) {
  const TransformSpec defaults = parse_transforms("RandomResizedCrop(224), TrivialAugmentWide, RandomErasing");
  EXPECT_EQ(defaults.auto_augment.kind, AutoAugmentKind::kTrivialAugmentWide);
  EXPECT_EQ(defaults.auto_augment.num_magnitude_bins, 31);
  EXPECT_EQ(defaults.auto_augment.interpolation, Interpolation::kNearest);
  EXPECT_FALSE(defaults.auto_augment.has_fill);
  EXPECT_EQ(defaults.erasing.p, 0.5);  // torchvision's defaults
  EXPECT_EQ(defaults.erasing.scale_min, 0.02);
  EXPECT_EQ(defaults.erasing.scale_max, 0.33);
  EXPECT_EQ(defaults.erasing.ratio_min, 0.3);
  EXPECT_EQ(defaults.erasing.ratio_max, 3.3);
  EXPECT_EQ(defaults.erasing.value, (std::array<float, 3>{0, 0, 0}));

  const TransformSpec ra =
      parse_transforms("RandAugment(3, 7, 15, InterpolationMode.BILINEAR, 128), RandomErasing(0.1, value=random)");
  EXPECT_EQ(ra.auto_augment.kind, AutoAugmentKind::kRandAugment);
  EXPECT_EQ(ra.auto_augment.num_ops, 3);
  EXPECT_EQ(ra.auto_augment.magnitude, 7);
  EXPECT_EQ(ra.auto_augment.num_magnitude_bins, 15);
  EXPECT_EQ(ra.auto_augment.interpolation, Interpolation::kBilinear);
  EXPECT_TRUE(ra.auto_augment.has_fill);
  EXPECT_EQ(ra.auto_augment.fill, (std::array<float, 3>{128, 128, 128}));
  EXPECT_TRUE(ra.erasing.random_value);
  EXPECT_EQ(parse_transforms("RandAugment(fill=None)").auto_augment.has_fill, false);

  EXPECT_EQ(parse_transforms("AutoAugment(AutoAugmentPolicy.SVHN)").auto_augment.policy, AutoAugmentPolicy::kSvhn);

  const AutoAugmentSpec mix = parse_transforms("AugMix").auto_augment;  // torchvision's defaults
  EXPECT_EQ(mix.kind, AutoAugmentKind::kAugMix);
  EXPECT_EQ(mix.severity, 3);
  EXPECT_EQ(mix.mixture_width, 3);
  EXPECT_EQ(mix.chain_depth, -1);
  EXPECT_EQ(mix.alpha, 1.0);
  EXPECT_TRUE(mix.all_ops);
  EXPECT_EQ(mix.interpolation, Interpolation::kBilinear);  // AugMix's own default
  const AutoAugmentSpec set = parse_transforms("AugMix(5, 4, 2, 0.5, False, 'nearest', 128)").auto_augment;
  EXPECT_EQ(set.severity, 5);
  EXPECT_EQ(set.mixture_width, 4);
  EXPECT_EQ(set.chain_depth, 2);
  EXPECT_EQ(set.alpha, 0.5);
  EXPECT_FALSE(set.all_ops);
  EXPECT_EQ(set.interpolation, Interpolation::kNearest);
  EXPECT_TRUE(set.has_fill);
  EXPECT_EQ(parse_transforms("AugMix, NCHW").describe(), "none \u00b7 AugMix() \u2192 float32 NCHW");
  EXPECT_EQ(parse_transforms("AutoAugment").auto_augment.policy, AutoAugmentPolicy::kImageNet);
  EXPECT_EQ(parse_transforms("RandomResizedCrop(224), RandomHorizontalFlip(), TrivialAugmentWide, Normalize, "
                             "RandomErasing(0.1)")
                .describe(),
            "RandomResizedCrop(224) \u00b7 RandomHorizontalFlip(0.5) \u00b7 TrivialAugmentWide() \u00b7 Normalize "
            "\u00b7 RandomErasing(p=0.1) \u2192 float32 NCHW");
  // They are image transforms: feature vectors refuse them.
  TransformSpec features = parse_transforms("RandomErasing(0.5)");
  features.features.length = 12;
  features.out_width = 12;
  features.out_height = 1;
  features.channels = 1;
  EXPECT_NE(testing::usage_error_text([&] {
              features.validate();
            }).find("RandomErasing(p=0.5) is an image transform, and the data holds feature vectors (12 per sample)"),
            std::string::npos);
}

TEST(ParseTransformsTest, ColorOperationsAreImageTransforms) {
  TransformSpec features = parse_transforms("RandomEqualize(p=0.2)");
  features.features.length = 12;
  features.out_width = 12;
  features.out_height = 1;
  features.channels = 1;
  EXPECT_NE(testing::usage_error_text([&] {
              features.validate();
            }).find("RandomEqualize(p=0.2) is an image transform, and the data holds feature vectors (12 per sample)"),
            std::string::npos);
}

TEST(ParseTransformsTest, RandomCropTakesTorchvisionsArguments) {
  const TransformSpec cifar = parse_transforms("RandomCrop(32, padding=4), RandomHorizontalFlip()");
  EXPECT_EQ(cifar.geometry, Geometry::kRandomCrop);
  EXPECT_EQ(cifar.out_width, 32);
  EXPECT_EQ(cifar.out_height, 32);
  EXPECT_EQ(cifar.pad.left, 4);
  EXPECT_EQ(cifar.pad.bottom, 4);
  EXPECT_FALSE(cifar.pad.if_needed);
  EXPECT_EQ(cifar.pad.mode, PaddingMode::kConstant);
  EXPECT_EQ(cifar.pad.fill, (std::array<float, 3>{0, 0, 0}));

  const TransformSpec all =
      parse_transforms("RandomCrop((24, 40), (1, 2), True, (1, 2, 3), 'reflect')");  // positional, quoted
  EXPECT_EQ(all.out_height, 24);
  EXPECT_EQ(all.out_width, 40);
  EXPECT_EQ(all.pad.left, 1);
  EXPECT_EQ(all.pad.right, 1);
  EXPECT_EQ(all.pad.top, 2);
  EXPECT_EQ(all.pad.bottom, 2);
  EXPECT_TRUE(all.pad.if_needed);
  EXPECT_EQ(all.pad.fill, (std::array<float, 3>{1, 2, 3}));
  EXPECT_EQ(all.pad.mode, PaddingMode::kReflect);
  const TransformSpec four = parse_transforms("RandomCrop(8, padding=[1, 2, 3, 4], padding_mode=\"symmetric\")");
  EXPECT_EQ(four.pad.left, 1);
  EXPECT_EQ(four.pad.top, 2);
  EXPECT_EQ(four.pad.right, 3);
  EXPECT_EQ(four.pad.bottom, 4);
  EXPECT_EQ(four.pad.mode, PaddingMode::kSymmetric);
  EXPECT_EQ(parse_transforms("RandomCrop(8, padding=None, padding_mode=edge)").pad.mode, PaddingMode::kEdge);
  EXPECT_EQ(parse_transforms("RandomCrop(32, padding=4), Normalize").describe(),
            "RandomCrop(32, padding=4) \u00b7 Normalize \u2192 float32 NCHW");

  // torchvision's own CenterCrop: 1:1, with or without resize=False.
  expect_same_spec(parse_transforms("CenterCrop((20, 30), resize=False)"), parse_transforms("CenterCrop((20, 30))"));
  const TransformSpec center = parse_transforms("CenterCrop((20, 30))");
  EXPECT_EQ(center.geometry, Geometry::kCenterCrop);
  EXPECT_EQ(center.out_height, 20);
  EXPECT_EQ(center.out_width, 30);
  EXPECT_EQ(parse_transforms("CenterCrop(20, resize=True)").geometry, Geometry::kResizeCenterCrop);
}

TEST(ParseTransformsTest, OrderDoesNotMatter) {
  const TransformSpec in_order = parse_transforms(
      "RandomResizedCrop(224), RandomHorizontalFlip(0.5), ColorJitter(0.4, 0.4, 0.4), "
      "Normalize, ToUint8, NHWC");
  const TransformSpec shuffled = parse_transforms(
      "NHWC; Normalize; ToUint8; ColorJitter(0.4, 0.4, 0.4); RandomHorizontalFlip(0.5); "
      "RandomResizedCrop(224)");
  expect_same_spec(in_order, shuffled);
  expect_same_spec(parse_transforms("CenterCrop(224), Resize(256)"), parse_transforms("Resize(256), CenterCrop(224)"));
}

// A chain pasted from a Python script: Compose or a bare list, module prefixes, the tensor
// conversions (ToTensor is the default output; PILToTensor / ToImage make it uint8 unless a
// ConvertImageDtype / ToDtype follows).
TEST(ParseTransformsTest, ReadsAChainPastedFromPython) {
  const std::vector<std::pair<std::string, std::string>> same = {
      {"transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),\n"
       "    transforms.ToTensor(),\n    transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, "
       "0.225]),\n])",
       "RandomResizedCrop(224), RandomHorizontalFlip(), Normalize"},
      {"v2.Compose([v2.ToImage(), v2.RandomResizedCrop(size=(224, 224), antialias=True), "
       "v2.RandomHorizontalFlip(p=0.5), "
       "v2.ToDtype(torch.float32, scale=True), v2.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])",
       "RandomResizedCrop(224), RandomHorizontalFlip(), Normalize"},
      {"[T.RandomCrop(32, padding=4), T.RandomApply([T.ColorJitter(0.4)], p=0.8), torchvision.transforms.ToTensor]",
       "RandomCrop(32, padding=4), RandomApply([ColorJitter(0.4)], p=0.8)"},
      {"Compose([Compose([RandomCrop(32, padding=4)]), RandomHorizontalFlip()])",
       "RandomCrop(32, padding=4), RandomHorizontalFlip()"},
      {"Compose(transforms=[Resize(256), CenterCrop(224)]), Normalize", "Resize(256), CenterCrop(224), Normalize"},
      {"Resize(256), CenterCrop(224), PILToTensor()", "Resize(256), CenterCrop(224), ToUint8"},
      {"ToImage(), CenterCrop(28)", "CenterCrop(28), ToUint8"},
      {"PILToTensor(), ConvertImageDtype(torch.float)", "none"},
      {"ToImage(), ToDtype(torch.float16, scale=True)", "Float16"},
      {"ConvertImageDtype(dtype=torch.uint8)", "ToUint8"},
      {"ToDtype(torch.uint8), ToTensor", "ToUint8"},
  };
  for (const auto& [pasted, plain] : same) {
    SCOPED_TRACE(pasted);
    TransformSpec got;
    ASSERT_NO_THROW(got = parse_transforms(pasted));
    expect_same_spec(got, parse_transforms(plain));
  }
}

TEST(ParseTransformsTest, DescribeIsTorchvisionNotation) {
  EXPECT_EQ(parse_transforms("RandomResizedCrop(224), RandomHorizontalFlip(0.5), Normalize").describe(),
            "RandomResizedCrop(224) \u00b7 RandomHorizontalFlip(0.5) \u00b7 Normalize "
            "\u2192 float32 NCHW");
  EXPECT_EQ(parse_transforms("Resize(256), CenterCrop(224), ToUint8, NHWC").describe(),
            "Resize(256) \u00b7 CenterCrop(224) \u2192 uint8 NHWC");
  EXPECT_EQ(parse_transforms("none").describe(), "none \u2192 float32 NCHW");
  EXPECT_EQ(parse_transforms("Resize((224, 224)), Normalize").describe(),
            "Resize((224, 224)) \u00b7 Normalize \u2192 float32 NCHW");
  EXPECT_EQ(parse_transforms("RandomCrop(224), Resize(256)").describe(),
            "Resize(256) \u00b7 RandomCrop(224) \u2192 float32 NCHW");
}

TEST(ParseTransformsTest, DescribeRoundTrips) {
  const std::vector<std::string> chains = {
      "RandomResizedCrop(224)",
      "RandomResizedCrop((160, 192), scale=(0.35, 1), ratio=(0.5, 2)), RandomHorizontalFlip(1)",
      "RandomResizedCrop(176, scale=(0.1, 0.9)), ColorJitter(0.4, 0.4, 0.4, 0.1), Float16",
      "Resize(256), CenterCrop(224), Normalize, ToUint8, NHWC",
      "CenterCrop((64, 48)), Grayscale, Normalize(mean=(0.1307,), std=(0.3081,))",
      "CenterCrop((64, 48), resize=True), Grayscale",
      "none, ColorJitter(hue=0.5), Normalize(mean=(0.1, 0.2, 0.3), std=(0.7, 0.8, 0.9))",
      "ColorJitter(contrast=0.123456789)",
      "Standardize, Float16",
      "Standardize(fit_rows=None)",
      "Standardize(fit_rows=5000), Float16",
      "RandomResizedCrop(224), RandomHorizontalFlip(), TrivialAugmentWide, Normalize, RandomErasing(0.25)",
      "RandomResizedCrop(176), RandAugment(num_ops=3, magnitude=5, num_magnitude_bins=11, interpolation=bilinear)",
      "CenterCrop(32), AutoAugment(policy=cifar10, fill=(128, 64, 0)), RandomErasing(p=1, scale=(0.1, 0.2), "
      "ratio=(0.5, 2), value=random), ToUint8",
      "none, AutoAugment, RandomErasing(value=(0.5, 0.25, 1))",
      "RandomCrop(32, padding=4), AugMix, Normalize",
      "none, AugMix(severity=1, mixture_width=8, chain_depth=8, alpha=0.25, all_ops=False, interpolation=nearest, "
      "fill=(1, 2, 3))",
      "RandomCrop(32, padding=4), RandomHorizontalFlip(), AutoAugment(policy=cifar10), Normalize",
      "RandomCrop((24, 40), padding=(1, 2), pad_if_needed=True, fill=(1, 2, 3), padding_mode=reflect)",
      "RandomCrop(8, padding=(0, 1, 2, 3), fill=7, padding_mode=symmetric), Grayscale, ToUint8",
      "RandomCrop(28, padding=(3, 0), padding_mode=edge)",
      "RandomCrop(224, pad_if_needed=True)",
      "CenterCrop((20, 30)), Float16",
      "Resize((224, 224))",
      "Resize((32, 32)), CenterCrop(28), Grayscale",
      "Resize((64, 48)), CenterCrop((64, 48))",
      "Resize(256), RandomCrop(224), RandomHorizontalFlip()",
      "Resize((40, 40)), RandomCrop(32, padding=4, padding_mode=reflect), Normalize",
      "Resize(160), RandomResizedCrop(128, scale=(0.25, 1))",
      "Resize(256, max_size=320), RandomCrop(224)",
      "RandomResizedCrop(96), RandomHorizontalFlip(), RandomVerticalFlip(0.3), ColorJitter(0.4, 0.4, 0.4), "
      "RandomGrayscale(0.2), Normalize",
      "RandomCrop(32, padding=4), RandomRotation(15), Normalize",
      "none, RandomRotation((0, 90), interpolation=bilinear, fill=(128, 128, 128))",
      "RandomCrop(32, padding=4), RandomAffine(15, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=10), Normalize",
      "none, RandomAffine((0, 30), shear=(-3, 4, 1, 2), interpolation=bilinear, fill=(128, 64, 0))",
      "none, RandomAffine(0, shear=(2, 8)), RandomRotation(5)",
      "RandomResizedCrop(96), RandomHorizontalFlip(), RandomApply([ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8), "
      "RandomGrayscale(0.2), RandomApply([GaussianBlur(9)], p=0.5), Normalize",
      "none, RandomApply([RandomAffine(5, translate=(0.1, 0.1))], p=0.3), RandomApply([RandomRotation(10)], p=0)",
      "RandomResizedCrop(96), RandomGrayscale(0.2), GaussianBlur(9, sigma=(0.1, 2)), Normalize",
      "none, GaussianBlur((5, 3), sigma=0.7)",
      "Resize(256, interpolation=bicubic), CenterCrop(224), Normalize",
      "RandomResizedCrop(176, scale=(0.25, 1), interpolation=bicubic), RandomHorizontalFlip()",
      "Resize((32, 32), interpolation=bicubic)",
      "Resize(160, max_size=200, interpolation=bicubic), RandomResizedCrop(128)",
      "Resize(40, interpolation=bicubic), RandomCrop(32, padding=4)",
      // BYOL's second view: blur on a tenth, solarization on a fifth.
      "RandomResizedCrop(96), RandomHorizontalFlip(), RandomApply([ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8), "
      "RandomGrayscale(0.2), RandomApply([GaussianBlur(23)], p=0.1), RandomSolarize(128, p=0.2), Normalize",
      "none, RandomEqualize(p=1), RandomAutocontrast(), RandomAdjustSharpness(0.25, p=0.75), RandomPosterize(0), "
      "RandomInvert(0.125), Grayscale, ToUint8",
  };
  for (const std::string& chain : chains) {
    SCOPED_TRACE(chain);
    const TransformSpec spec = parse_transforms(chain);
    const std::string text = spec.describe();
    SCOPED_TRACE(text);
    TransformSpec again;
    ASSERT_NO_THROW(again = parse_transforms(text));
    expect_same_spec(again, spec);
    EXPECT_EQ(again.describe(), text);
  }

  // A spec built in code (3/4 and 4/3 ratios, a set size for kNone) round-trips too.
  TransformSpec spec;
  spec.hflip.p = 0.3;
  spec.normalize.on = true;
  spec.dtype = DType::kFloat16;
  expect_same_spec(parse_transforms(spec.describe()), spec);
}

TEST(EvalTransformTest, RandomPartsBecomeTheirDeterministicCounterparts) {
  const auto eval = [](const std::string& chain) { return eval_transform(parse_transforms(chain)).describe(); };
  // torchvision's ImageNet recipe: RandomResizedCrop(224) trains, Resize(256), CenterCrop(224) evaluates.
  EXPECT_EQ(eval("RandomResizedCrop(224), RandomHorizontalFlip(), Normalize"),
            "Resize(256) \u00b7 CenterCrop(224) \u00b7 Normalize \u2192 float32 NCHW");
  EXPECT_EQ(eval("RandomResizedCrop(64, scale=(0.3, 1)), ColorJitter(0.4, 0.4, 0.4, 0.1), Float16, NHWC"),
            "Resize(73) \u00b7 CenterCrop(64) \u2192 float16 NHWC");
  EXPECT_EQ(eval("RandomResizedCrop((224, 160))"), "Resize(182) \u00b7 CenterCrop((224, 160)) \u2192 float32 NCHW");
  // The filter carries over, as timm's and torchvision's bicubic recipes evaluate.
  EXPECT_EQ(eval("RandomResizedCrop(224, interpolation=InterpolationMode.BICUBIC)"),
            "Resize(256, interpolation=bicubic) \u00b7 CenterCrop(224) \u2192 float32 NCHW");
  // What is already deterministic stays as it is.
  for (const std::string chain : {"Resize(40), CenterCrop(32), Grayscale, Normalize(mean=(0.5,), std=(0.5,))",
                                  "none, Grayscale, ToUint8", "Standardize"}) {
    EXPECT_EQ(eval(chain), parse_transforms(chain).describe()) << chain;
  }
  EXPECT_EQ(eval("none, RandomHorizontalFlip(1), ColorJitter(hue=0.2)"), "none \u2192 float32 NCHW");
  EXPECT_EQ(eval("none, RandomVerticalFlip(), RandomGrayscale(0.5), RandomRotation(10), GaussianBlur(3)"),
            "none \u2192 float32 NCHW");
  EXPECT_EQ(eval("none, RandomAffine(10, translate=(0.1, 0.1), scale=(0.9, 1.1))"), "none \u2192 float32 NCHW");
  EXPECT_EQ(eval("none, RandomApply([ColorJitter(0.4)], p=0.8), RandomApply([GaussianBlur(3)])"),
            "none \u2192 float32 NCHW");
  EXPECT_EQ(eval("none, RandomSolarize(128, p=1), RandomPosterize(4), RandomAdjustSharpness(2), RandomInvert(), "
                 "RandomAutocontrast(), RandomEqualize()"),
            "none \u2192 float32 NCHW");
  // CIFAR's recipe: RandomCrop(32, padding=4) trains, the 32 x 32 image itself evaluates.
  EXPECT_EQ(eval("RandomCrop(32, padding=4, padding_mode=reflect), RandomHorizontalFlip(), Normalize"),
            "CenterCrop(32) \u00b7 Normalize \u2192 float32 NCHW");
  EXPECT_EQ(eval("none, TrivialAugmentWide, Normalize, RandomErasing"), "none \u00b7 Normalize \u2192 float32 NCHW");
  // After a Resize, the crops evaluate as that Resize and the centre.
  EXPECT_EQ(eval("Resize(256), RandomCrop(224), RandomHorizontalFlip()"),
            "Resize(256) \u00b7 CenterCrop(224) \u2192 float32 NCHW");
  EXPECT_EQ(eval("Resize((36, 36)), RandomCrop(32, padding=4, padding_mode=reflect)"),
            "Resize((36, 36)) \u00b7 CenterCrop(32) \u2192 float32 NCHW");
  EXPECT_EQ(eval("Resize(300), RandomResizedCrop(224)"), "Resize(300) \u00b7 CenterCrop(224) \u2192 float32 NCHW");
  const TransformSpec spec = eval_transform(parse_transforms("RandomResizedCrop(96), RandomHorizontalFlip()"));
  EXPECT_NO_THROW(spec.validate());
  expect_same_spec(parse_transforms(spec.describe()), spec);
}

// stoker's ToUint8 keeps Normalize for the consumer; after PILToTensor RandomErasing's value is
// a pixel value, truncated as torchvision's cast to uint8 truncates it.
TEST(ParseTransformsTest, UintOutputTakesTorchvisionsMeaning) {
  EXPECT_TRUE(parse_transforms("CenterCrop(4), ToUint8, Normalize").normalize.enabled());
  const TransformSpec spec = parse_transforms("CenterCrop(4), PILToTensor(), RandomErasing(p=1, value=(7.9, 0, 255))");
  EXPECT_EQ(spec.dtype, DType::kUint8);
  EXPECT_FLOAT_EQ(spec.erasing.value[0] * 255, 7);
  EXPECT_FLOAT_EQ(spec.erasing.value[1], 0);
  EXPECT_FLOAT_EQ(spec.erasing.value[2], 1);
  const TransformSpec float_erasing = parse_transforms("CenterCrop(4), RandomErasing(p=1, value=0.5)");
  EXPECT_FLOAT_EQ(float_erasing.erasing.value[0], 0.5f);
}

TEST(ParseTransformsTest, ErrorsNameTheProblem) {
  struct Case {
    const char* text;
    std::vector<std::string> needles;  // all must appear in the message
  };
  const std::vector<Case> cases = {
      {"RandomCutout(224)",
       {"unknown transform 'RandomCutout'",
        // The registry's order (data/transform/ops/registry.cpp), the order describe() writes.
        "(known: BoxCrop, Resize, RandomResizedCrop, RandomCrop, CenterCrop, none, Pad, Standardize, "
        "RandomHorizontalFlip, RandomVerticalFlip, RandomChoice, RandomOrder, RandomRotation, RandomAffine, "
        "RandomPerspective, ElasticTransform, RandomApply, TrivialAugmentWide, RandAugment, AutoAugment, AugMix, "
        "ColorJitter, RandomGrayscale, GaussianBlur, RandomInvert, RandomPosterize, RandomSolarize, "
        "RandomAdjustSharpness, RandomAutocontrast, RandomEqualize, Grayscale, Normalize, RandomErasing, ToTensor, "
        "PILToTensor, ToImage, ConvertImageDtype, ToDtype, ToUint8, Float16, Float32, NCHW, NHWC)"}},
      {"Normalise", {"unknown transform 'Normalise'", "did you mean 'Normalize'?"}},
      {"randomresizedcrop(224)", {"'randomresizedcrop'", "did you mean 'RandomResizedCrop'?"}},
      {"Lambda(lambda x: x * 2)", {"Lambda runs Python code, which stoker's C++ workers cannot"}},
      {"T.Lambda(f), T.ToTensor()", {"Lambda runs Python code"}},
      {"Compose(RandomCrop(32))",
       {"Compose takes one list of transforms, e.g. Compose([Resize(256), CenterCrop(224)])",
        "(got 'Compose(RandomCrop(32))')"}},
      {"Compose([1, 2])", {"Compose holds '1', which is not a transform"}},
      {"[RandomCrop(32), (1, 2)]", {"the list holds '(1, 2)', which is not a transform"}},
      {"transforms.RandomCutout(3)", {"unknown transform 'RandomCutout'"}},
      // torchvision's Normalize raises on a uint8 tensor; stoker's uint8 output is not normalised.
      {"CenterCrop(4), PILToTensor(), Normalize(mean=(0.5, 0.5, 0.5), std=(0.2, 0.2, 0.2))",
       {"Normalize needs a float image and PILToTensor gives uint8", "add ConvertImageDtype(torch.float32)"}},
      {"ToTensor(), Normalize(), ConvertImageDtype(torch.uint8)",
       {"Normalize needs a float image and ConvertImageDtype gives uint8"}},
      // RandomErasing on PILToTensor's uint8 tensor erases with a pixel value.
      {"CenterCrop(4), PILToTensor(), RandomErasing(p=1, value=random)",
       {"RandomErasing(value='random') on PILToTensor's uint8 image"}},
      {"CenterCrop(4), ToImage(), RandomErasing(p=1, value=300)",
       {"RandomErasing's value 300 on ToImage's uint8 image is a pixel value", "give 0..255"}},
      {"ToDtype(torch.float32)",
       {"ToDtype(torch.float32) keeps pixel values 0..255 as floats without scale=True",
        "ToDtype(torch.float32, scale=True)"}},
      {"ToDtype(torch.float32, scale=False)", {"without scale=True"}},
      {"ConvertImageDtype(torch.float64)",
       {"ConvertImageDtype dtype must be one of float, float32, half, float16, uint8 (got 'torch.float64')"}},
      {"ConvertImageDtype()", {"ConvertImageDtype needs a dtype, e.g. ConvertImageDtype(torch.float32)"}},
      {"ConvertImageDtype(torch.float), Float16", {"ConvertImageDtype and Float16 both set the output type"}},
      {"ToTensor(), ToTensor()", {"ToTensor appears twice"}},
      {"ToTensor(1)", {"ToTensor takes no arguments"}},
      {"", {"empty transform chain"}},
      {" , ; ", {"empty transform chain"}},
      {"RandomResizedCrop", {"RandomResizedCrop needs a size"}},
      {"RandomResizedCrop(224.5)", {"RandomResizedCrop size", "'224.5'"}},
      {"RandomResizedCrop(0)", {"RandomResizedCrop size must be in 1..8192", "0"}},
      {"RandomResizedCrop(9000)", {"RandomResizedCrop size must be in 1..8192", "9000"}},
      {"RandomResizedCrop((1, 2, 3))", {"RandomResizedCrop size", "(height, width)", "(1, 2, 3)"}},
      {"RandomResizedCrop(abc)", {"RandomResizedCrop size must be a number", "'abc'"}},
      {"RandomResizedCrop(224, scale=(0.5, 0.2))",
       {"RandomResizedCrop scale must satisfy 0 < min <= max <= 1 (got (0.5, 0.2))"}},
      {"RandomResizedCrop(224, scale=(0, 1))", {"RandomResizedCrop scale", "(got (0, 1))"}},
      {"RandomResizedCrop(224, scale=(0.5, 1.5))", {"RandomResizedCrop scale", "1.5"}},
      {"RandomResizedCrop(224, scale=0.5)", {"RandomResizedCrop scale must be a pair", "'0.5'"}},
      {"RandomResizedCrop(224, ratio=(2, 1))", {"RandomResizedCrop ratio", "(got (2, 1))"}},
      {"RandomResizedCrop(224, ratio=(1.x, 2))", {"RandomResizedCrop ratio", "'1.x'"}},
      {"RandomResizedCrop(224, flip=True)",
       {"RandomResizedCrop has no argument 'flip'", "size, scale, ratio, interpolation, antialias"}},
      {"RandomResizedCrop(224, interpolation=0)",
       {"RandomResizedCrop interpolation must be bilinear or bicubic (got '0')", "antialiased bilinear or bicubic"}},
      {"Resize(256, interpolation=InterpolationMode.NEAREST), CenterCrop(224)",
       {"Resize interpolation must be bilinear or bicubic (got 'InterpolationMode.NEAREST')"}},
      {"Resize(256, interpolation=bicubic), RandomResizedCrop(224, interpolation=bilinear)",
       {"Resize and RandomResizedCrop ask for different interpolations (bicubic and bilinear)", "one resample"}},
      {"Resize(256, antialias=False), CenterCrop(224)",
       {"Resize antialias must be True or None (got 'False')", "always antialiases"}},
      {"Resize((256, 256), max_size=300)", {"Resize max_size applies to an int size", "(256, 256)"}},
      {"Resize(256, max_size=256), CenterCrop(224)", {"Resize max_size must be a whole number in 257..8192", "256"}},
      {"RandomResizedCrop(224, 224, 224, 224, 224, 224)", {"RandomResizedCrop takes at most 5 positional arguments"}},
      {"RandomResizedCrop(224, size=192)", {"RandomResizedCrop got more than one value for argument 'size'"}},
      {"RandomResizedCrop(224), RandomResizedCrop(192)", {"RandomResizedCrop appears twice"}},
      {"RandomResizedCrop(224), CenterCrop(224)", {"CenterCrop conflicts with RandomResizedCrop"}},
      {"none, Resize(256), CenterCrop(224)", {"CenterCrop conflicts with none"}},
      {"none, Resize((32, 32))", {"Resize((32, 32)) resizes and 'none' keeps the source's size"}},
      {"Resize(256)",
       {"Resize(256) resizes the shorter side", "add a crop after it", "CenterCrop(256)", "Resize((256, 256))"}},
      {"Resize((256, 256, 3))", {"Resize size must be an integer or (height, width)", "(256, 256, 3)"}},
      {"Resize((256, 0))", {"Resize size must be in 1..8192", "0"}},
      {"Resize(256), Resize(224)", {"Resize appears twice"}},
      {"Resize(-3), CenterCrop(2)", {"Resize size must be in 1..8192", "-3"}},
      {"CenterCrop(0)", {"CenterCrop size must be in 1..8192"}},
      {"RandomHorizontalFlip(1.5)", {"RandomHorizontalFlip p must be in [0, 1] (got 1.5)"}},
      {"RandomHorizontalFlip(p=yes)", {"RandomHorizontalFlip p must be a number", "'yes'"}},
      {"RandomHorizontalFlip(q=0.5)", {"RandomHorizontalFlip has no argument 'q'"}},
      {"RandomVerticalFlip(2)", {"RandomVerticalFlip p must be in [0, 1] (got 2)"}},
      {"RandomGrayscale(-0.1)", {"RandomGrayscale p must be in [0, 1] (got -0.1)"}},
      {"RandomVerticalFlip, RandomVerticalFlip(1)", {"RandomVerticalFlip appears twice"}},
      {"RandomRotation", {"RandomRotation needs degrees", "RandomRotation(15)"}},
      {"GaussianBlur", {"GaussianBlur needs a kernel_size", "GaussianBlur(23)"}},
      {"GaussianBlur(4)", {"GaussianBlur kernel_size must be odd and positive", "(got 4)"}},
      {"GaussianBlur((3, 6))", {"GaussianBlur kernel_size must be odd and positive", "(got 6)"}},
      {"GaussianBlur(3, sigma=(2, 1))", {"GaussianBlur sigma must satisfy 0 < min <= max", "(2, 1)"}},
      {"GaussianBlur(3, sigma=0)", {"GaussianBlur sigma must satisfy 0 < min <= max", "(0, 0)"}},
      {"RandomRotation(-5)", {"RandomRotation degrees must be >= 0 for a single number (got -5)", "(min, max)"}},
      {"RandomRotation((30, 10))", {"RandomRotation degrees must satisfy min <= max", "(30, 10)"}},
      {"RandomRotation(10, expand=True)", {"RandomRotation expand=True changes the image's size"}},
      {"RandomRotation(10, center=(1, 2))", {"RandomRotation center must be None", "(1, 2)"}},
      {"RandomPerspective(interpolation=bicubic)",
       {"RandomPerspective interpolation must be one of nearest, bilinear", "bicubic"}},
      {"RandomRotation(10, fill=300)", {"RandomRotation fill must be pixel values in [0, 255]", "300"}},
      {"RandomAffine", {"RandomAffine needs degrees", "RandomAffine(10, translate=(0.1, 0.1))"}},
      {"RandomAffine(translate=(0.1, 0.1))", {"RandomAffine needs degrees"}},
      {"RandomAffine(-5)", {"RandomAffine degrees must be >= 0 for a single number (got -5)", "(min, max)"}},
      {"RandomAffine((30, 10))", {"RandomAffine degrees must satisfy min <= max", "(30, 10)"}},
      {"RandomAffine(0, translate=0.1)", {"RandomAffine translate must be a pair (tx, ty)", "'0.1'"}},
      {"RandomAffine(0, translate=(0.1, 1.5))", {"RandomAffine translate must be fractions", "[0, 1]", "(0.1, 1.5)"}},
      {"RandomAffine(0, scale=(0, 1))", {"RandomAffine scale must satisfy 0 < min <= max", "(0, 1)"}},
      {"RandomAffine(0, scale=(1.2, 0.8))", {"RandomAffine scale must satisfy 0 < min <= max", "(1.2, 0.8)"}},
      {"RandomAffine(0, scale=1.1)", {"RandomAffine scale must be a pair (min, max)", "'1.1'"}},
      {"RandomAffine(0, shear=-4)", {"RandomAffine shear must be >= 0 for a single number (got -4)"}},
      {"RandomAffine(0, shear=(1, 2, 3))", {"RandomAffine shear must be a number, (min, max) for x", "(1, 2, 3)"}},
      {"RandomAffine(0, shear=(5, -5))", {"RandomAffine shear must satisfy min <= max", "(5, -5)"}},
      {"RandomAffine(0, shear=(0, 0, 0, 90))", {"RandomAffine shear must be within (-90, 90) degrees", "90"}},
      {"RandomAffine(5, center=(1, 2))", {"RandomAffine center must be None", "(1, 2)"}},
      {"ElasticTransform(interpolation=bicubic)",
       {"ElasticTransform interpolation must be one of nearest, bilinear (got 'bicubic')",
        "give ElasticTransform interpolation=bilinear", "keep bicubic in Resize and the crops"}},
      {"RandomAffine(5, fill=-1)", {"RandomAffine fill must be pixel values in [0, 255]", "-1"}},
      {"RandomAffine(5, resample=2)", {"RandomAffine has no argument 'resample'"}},
      {"RandomApply(ColorJitter(0.4))", {"RandomApply needs a list of one transform", "RandomApply([ColorJitter"}},
      {"RandomApply([])", {"RandomApply needs a list of one transform"}},
      {"RandomApply", {"RandomApply needs a list of one transform"}},
      {"RandomApply([ColorJitter(0.4), GaussianBlur(3)])",
       {"RandomApply takes one transform in stoker (got 2: [ColorJitter(0.4), GaussianBlur(3)])",
        "one RandomApply per transform"}},
      {"RandomApply([Normalize])",
       {"RandomApply takes ColorJitter, GaussianBlur, RandomRotation, RandomAffine, RandomPerspective, "
        "ElasticTransform or a colour operation (RandomInvert, RandomPosterize, RandomSolarize, RandomAdjustSharpness, "
        "RandomAutocontrast, RandomEqualize) "
        "(got 'Normalize')"}},
      {"RandomApply([RandomErasing(0.5)])", {"(got 'RandomErasing(0.5)'); RandomErasing has a p of its own"}},
      {"RandomApply([Grayscale()])", {"use RandomGrayscale(p)"}},
      {"RandomApply([RandomSolarize(128)], p=2)", {"RandomApply p must be in [0, 1] (got 2, around RandomSolarize)"}},
      {"RandomSolarize", {"RandomSolarize needs its threshold", "RandomSolarize(128, p=0.2)"}},
      {"RandomPosterize(p=0.5)", {"RandomPosterize needs its bits", "RandomPosterize(4, p=0.5)"}},
      {"RandomAdjustSharpness()", {"RandomAdjustSharpness needs its sharpness_factor"}},
      {"RandomSolarize(0.5)",
       {"RandomSolarize threshold is a pixel value in [0, 255]", "(got 0.5)", "RandomSolarize(128) for 0.5"}},
      {"RandomSolarize(256)", {"RandomSolarize threshold must be a pixel value in [0, 255] (got 256)"}},
      {"RandomSolarize(128, p=-0.5)", {"RandomSolarize p must be in [0, 1] (got -0.5)"}},
      {"RandomPosterize(9)", {"RandomPosterize bits must be a whole number in 0..8 (got '9')"}},
      {"RandomPosterize(3.5)", {"RandomPosterize bits must be a whole number in 0..8 (got '3.5')"}},
      {"RandomAdjustSharpness(-1)", {"RandomAdjustSharpness sharpness_factor must be a number >= 0 (got -1)"}},
      {"RandomEqualize(2)", {"RandomEqualize p must be in [0, 1] (got 2)"}},
      {"RandomInvert(p=0.5, q=1)", {"RandomInvert has no argument 'q'"}},
      {"RandomAutocontrast(), RandomAutocontrast(0.2)", {"RandomAutocontrast appears twice"}},
      {"RandomApply([ColorJitter(0.4)], p=1.5)", {"RandomApply p must be in [0, 1] (got 1.5, around ColorJitter)"}},
      {"RandomApply([ColorJitter(0.4)], q=1)", {"RandomApply has no argument 'q'"}},
      {"RandomApply([ColorJitter(-1)])", {"ColorJitter brightness must be >= 0 (got -1)"}},
      {"ColorJitter(0.2), RandomApply([ColorJitter(0.4)])", {"ColorJitter appears twice"}},
      {"RandomApply([Blur(3)])", {"(got 'Blur(3)')"}},
      {"ColorJitter(-0.1)", {"ColorJitter brightness must be >= 0 (got -0.1)"}},
      {"ColorJitter(contrast=-1)", {"ColorJitter contrast must be >= 0 (got -1)"}},
      {"ColorJitter(0, 0, -2)", {"ColorJitter saturation must be >= 0 (got -2)"}},
      {"ColorJitter(hue=0.7)", {"ColorJitter hue must be in [0, 0.5] (got 0.7)"}},
      {"ColorJitter(brightness=(1.5, 0.5))", {"ColorJitter brightness must satisfy 0 <= min <= max", "(1.5, 0.5)"}},
      {"Normalize(cifar)", {"Normalize preset must be 'imagenet'", "'cifar'"}},
      {"Normalize(mean=(0.5, 0.5, 0.5))", {"Normalize needs both mean and std"}},
      {"Normalize(mean=(0.5, 0.5), std=(1, 1))", {"Normalize mean", "1 or 3 values", "(0.5, 0.5)"}},
      {"Normalize(mean=(0.5, 0.5, 0.5), std=(1, 0, 1))", {"Normalize std must be non-zero", "std[1] = 0"}},
      {"Grayscale(2)", {"Grayscale num_output_channels must be 1 or 3, as torchvision's (got 2)"}},
      {"ToUint8(1)", {"ToUint8 takes no arguments", "ToUint8(1)"}},
      {"ToUint8, Float16", {"ToUint8 and Float16 both set the output type"}},
      {"NCHW, NHWC", {"NCHW and NHWC both set the output layout"}},
      {"Normalize(mean=(0.5, 0.5, 0.5), std=(1, 1, 1)", {"missing ')'", "Normalize"}},
      {"RandomResizedCrop(224))", {"expected ','", "RandomResizedCrop(224)"}},
      {"RandomHorizontalFlip(0.5 0.5)", {"expected ',' or ')'", "RandomHorizontalFlip"}},
      {"RandomResizedCrop(224, ?)", {"unexpected '?'", "RandomResizedCrop"}},
      {"224", {"expected a transform name", "'224'"}},
      {"TrivialAugmentWide, RandAugment", {"RandAugment conflicts with TrivialAugmentWide", "give one"}},
      {"AutoAugment(policy=cifar100)", {"AutoAugment policy must be one of imagenet, cifar10, svhn", "cifar100"}},
      {"RandAugment(magnitude=31)", {"RandAugment magnitude must be in 0..30", "31"}},
      {"RandAugment(num_ops=2.5)", {"RandAugment num_ops must be a whole number in 0..16", "2.5"}},
      {"TrivialAugmentWide(num_magnitude_bins=1)", {"num_magnitude_bins must be a whole number in 2..1000"}},
      {"TrivialAugmentWide(interpolation=lanczos)",
       {"interpolation must be one of nearest, bilinear, bicubic (got 'lanczos')"}},
      {"TrivialAugmentWide(fill=300)", {"TrivialAugmentWide fill must be pixel values in [0, 255]", "300"}},
      {"AutoAugment(magnitude=3)", {"AutoAugment has no argument 'magnitude'", "policy, interpolation, fill"}},
      {"RandomErasing(p=1.5)", {"RandomErasing p must be in [0, 1]", "1.5"}},
      {"AugMix(severity=11)", {"AugMix severity must be a whole number in 1..10", "11"}},
      {"AugMix(mixture_width=9)", {"AugMix mixture_width must be a whole number in 1..8", "9"}},
      {"AugMix(chain_depth=0)", {"AugMix chain_depth must be -1 (1 to 3 at random) or 1..8 (got 0)"}},
      {"AugMix(alpha=0)", {"AugMix alpha must be a number > 0 (got 0)"}},
      {"AugMix(all_ops=maybe)", {"AugMix all_ops must be True or False", "maybe"}},
      {"AugMix, TrivialAugmentWide", {"TrivialAugmentWide conflicts with AugMix"}},
      {"RandomErasing(scale=(0.5, 0.1))", {"RandomErasing scale must satisfy 0 <= min <= max <= 1"}},
      {"RandomErasing(ratio=(0, 1))", {"RandomErasing ratio must satisfy 0 < min <= max"}},
      {"RandomErasing(value=black)", {"RandomErasing value must be a number", "or random", "black"}},
      {"RandomErasing(value=(1, 2))", {"RandomErasing value must have 1 or 3 values"}},
      {"RandomCrop", {"RandomCrop needs a size", "RandomCrop(32, padding=4)"}},
      {"RandomCrop(32, padding=-1)", {"RandomCrop padding must be a whole number in 0..8192", "-1"}},
      {"RandomCrop(32, padding=(1, 2, 3))", {"RandomCrop padding must be an int", "(left, top, right, bottom)"}},
      {"RandomCrop(32, padding_mode=wrap)",
       {"RandomCrop padding_mode must be one of constant, edge, reflect, symmetric", "wrap"}},
      {"RandomCrop(32, pad_if_needed=yes)", {"RandomCrop pad_if_needed must be True or False", "yes"}},
      {"RandomCrop(32, fill=256)", {"RandomCrop fill must be pixel values in [0, 255]", "256"}},
      {"RandomCrop(32, padding_mode='reflect)", {"missing closing '", "RandomCrop"}},
      {"RandomCrop(32), RandomResizedCrop(32)", {"RandomResizedCrop conflicts with RandomCrop", "RandomCrop(size)"}},
      {"RandomCrop(32), CenterCrop(32)", {"CenterCrop conflicts with RandomCrop"}},
      {"Resize(40), RandomCrop(32), CenterCrop(32)", {"CenterCrop conflicts with RandomCrop", "optional Resize"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string message = testing::usage_error_text([&] { parse_transforms(c.text); });
    for (const std::string& needle : c.needles) {
      EXPECT_NE(message.find(needle), std::string::npos) << "message: " << message;
    }
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
  }
}

TEST(TransformSpecTest, ValidateNamesFieldValueAndRange) {
  struct Case {
    const char* name;
    std::function<void(TransformSpec*)> edit;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {"scale",
       [](TransformSpec* s) {
         s->random_resized_crop.scale_min = 0.5;
         s->random_resized_crop.scale_max = 0.2;
       },
       "RandomResizedCrop scale must satisfy 0 < min <= max <= 1 (got (0.5, 0.2))"},
      {"ratio", [](TransformSpec* s) { s->random_resized_crop.ratio_min = 0; },
       "RandomResizedCrop ratio must satisfy 0 < min <= max (got (0, 1.3333333333333333))"},
      {"width", [](TransformSpec* s) { s->out_width = 0; }, "RandomResizedCrop size must be in 1..8192 (got (224, 0))"},
      {"height", [](TransformSpec* s) { s->out_height = 8193; },
       "RandomResizedCrop size must be in 1..8192 (got (8193, 224))"},
      {"resize",
       [](TransformSpec* s) {
         s->geometry = Geometry::kResizeCenterCrop;
         s->resize.shorter = 9000;
       },
       "Resize size must be in 1..8192 (got 9000)"},
      {"resize pair",
       [](TransformSpec* s) {
         s->resize.width = 32;
         s->resize.height = -1;
       },
       "Resize size must be in 1..8192 (got (-1, 32))"},
      {"no resize", [](TransformSpec* s) { s->geometry = Geometry::kResizeCenterCrop; },
       "Resize+CenterCrop needs a Resize size (got none)"},
      {"max_size",
       [](TransformSpec* s) {
         s->geometry = Geometry::kResizeCenterCrop;
         s->resize.shorter = 256;
         s->resize.max_size = 200;
       },
       "Resize max_size must be in 257..8192, above the size (got 200)"},
      {"none resized",
       [](TransformSpec* s) {
         s->geometry = Geometry::kNone;
         s->resize.shorter = 32;
       },
       "none takes no Resize"},
      {"none size",
       [](TransformSpec* s) {
         s->geometry = Geometry::kNone;
         s->out_width = 0;
       },
       "output size must be in 1..8192 (got (224, 0))"},
      {"flip", [](TransformSpec* s) { s->hflip.p = -0.5; }, "RandomHorizontalFlip p must be in [0, 1] (got -0.5)"},
      {"brightness", [](TransformSpec* s) { s->jitter.brightness = -1; },
       "ColorJitter brightness must be >= 0 (got -1)"},
      {"hue", [](TransformSpec* s) { s->jitter.hue = 0.51; }, "ColorJitter hue must be in [0, 0.5] (got 0.51)"},
      {"std",
       [](TransformSpec* s) {
         s->normalize.on = true;
         s->normalize.std[2] = 0;
       },
       "Normalize std must be non-zero and finite (got std[2] = 0)"},
      {"channels", [](TransformSpec* s) { s->channels = 4; }, "channels must be 1 (Grayscale) or 3 (RGB) (got 4)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TransformSpec spec;
    EXPECT_NO_THROW(spec.validate());
    c.edit(&spec);
    const std::string message = testing::usage_error_text([&] { spec.validate(); });
    EXPECT_NE(message.find(c.needle), std::string::npos) << "message: " << message;
  }
}

TEST(TransformSpecTest, ValidateAcceptsUnsetSizeOnlyForNone) {
  TransformSpec spec;
  spec.geometry = Geometry::kNone;
  spec.out_width = spec.out_height = 0;
  EXPECT_NO_THROW(spec.validate());
  EXPECT_EQ(spec.sample_bytes(), 0u);
  // Grey specs only use the first std element; the others may be anything.
  spec.channels = 1;
  spec.normalize.on = true;
  spec.normalize.std = {0.5f, 0.0f, 0.0f};
  EXPECT_NO_THROW(spec.validate());
  spec.geometry = Geometry::kRandomResizedCrop;
  EXPECT_THROW(spec.validate(), UsageError);
}

}  // namespace
}  // namespace stoker::data

namespace stoker::data {
namespace {

// Standardize's fit reads a sample of 262,144 rows by default; fit_rows sets it, None: every row.
TEST(ParseTransformsTest, StandardizeTakesTheRowsItsFitReads) {
  EXPECT_EQ(parse_transforms("Standardize").features.fit_rows, kStandardizeFitRows);
  EXPECT_EQ(parse_transforms("Standardize(fit_rows=None)").features.fit_rows, 0);
  EXPECT_EQ(parse_transforms("Standardize(5000)").features.fit_rows, 5000);
  EXPECT_EQ(parse_transforms("Standardize(fit_rows=262144)").describe(), parse_transforms("Standardize").describe());
  for (const char* bad : {"Standardize(fit_rows=0)", "Standardize(fit_rows=-3)", "Standardize(fit_rows=2.5)",
                          "Standardize(fit_rows=all)"}) {
    const std::string message = testing::usage_error_text([&] { parse_transforms(bad); });
    EXPECT_NE(message.find("fit_rows"), std::string::npos) << bad << ": " << message;
  }
}

}  // namespace
}  // namespace stoker::data
