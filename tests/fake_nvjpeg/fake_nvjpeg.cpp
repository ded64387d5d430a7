// tests/fake_nvjpeg/fake_nvjpeg.cpp — a stand-in libnvjpeg.so.12 for testing how stoker finds
// and loads nvJPEG without a GPU: it exports the functions stoker resolves, each of which
// fails as nvJPEG does on a machine without a usable GPU (NVJPEG_STATUS_ARCH_MISMATCH), except
// nvjpegGetProperty, which reports version 12.99.7 so that a test can tell it called the fake.
//
// Built twice (tests/CMakeLists.txt): complete, and with FAKE_NVJPEG_LEAVE_OUT_DECODE_BATCHED_EX
// defined, without nvjpegDecodeBatchedEx (an nvJPEG too old for stoker). The names are this
// file's own list, not stoker's, so that a function stoker starts to require fails the tests
// until the fake has it too.
extern "C" {

int nvjpegGetProperty(int type, int* value) {
  static const int kVersion[] = {12, 99, 7};
  if (type < 0 || type > 2 || value == nullptr) return 2;  // NVJPEG_STATUS_INVALID_PARAMETER
  *value = kVersion[type];
  return 0;
}

#define FAKE_NVJPEG_FUNCTION(name) \
  int name() { return 7; }  // NVJPEG_STATUS_ARCH_MISMATCH

FAKE_NVJPEG_FUNCTION(nvjpegCreateEx)
FAKE_NVJPEG_FUNCTION(nvjpegDestroy)
FAKE_NVJPEG_FUNCTION(nvjpegSetDeviceMemoryPadding)
FAKE_NVJPEG_FUNCTION(nvjpegJpegStateCreate)
FAKE_NVJPEG_FUNCTION(nvjpegJpegStateDestroy)
FAKE_NVJPEG_FUNCTION(nvjpegGetImageInfo)
FAKE_NVJPEG_FUNCTION(nvjpegDecodeBatchedInitialize)
FAKE_NVJPEG_FUNCTION(nvjpegDecodeBatched)
#ifndef FAKE_NVJPEG_LEAVE_OUT_DECODE_BATCHED_EX
FAKE_NVJPEG_FUNCTION(nvjpegDecodeBatchedEx)
#endif
FAKE_NVJPEG_FUNCTION(nvjpegDecodeBatchedPreAllocate)
FAKE_NVJPEG_FUNCTION(nvjpegDecodeBatchedSupportedEx)
FAKE_NVJPEG_FUNCTION(nvjpegJpegStreamCreate)
FAKE_NVJPEG_FUNCTION(nvjpegJpegStreamDestroy)
FAKE_NVJPEG_FUNCTION(nvjpegJpegStreamParse)
FAKE_NVJPEG_FUNCTION(nvjpegDecodeParamsCreate)
FAKE_NVJPEG_FUNCTION(nvjpegDecodeParamsDestroy)
FAKE_NVJPEG_FUNCTION(nvjpegDecodeParamsSetOutputFormat)
FAKE_NVJPEG_FUNCTION(nvjpegDecodeParamsSetROI)
FAKE_NVJPEG_FUNCTION(nvjpegDecodeParamsSetScaleFactor)
FAKE_NVJPEG_FUNCTION(nvjpegDecoderCreate)
FAKE_NVJPEG_FUNCTION(nvjpegDecoderDestroy)
FAKE_NVJPEG_FUNCTION(nvjpegDecoderStateCreate)
FAKE_NVJPEG_FUNCTION(nvjpegDecodeJpeg)
FAKE_NVJPEG_FUNCTION(nvjpegGetHardwareDecoderInfo)

}  // extern "C"
