#define BOOST_TEST_MODULE zpolicy_kernel
#include <boost/test/unit_test.hpp>
